"""Never-store under disguise, on real SQLite: formats and scripts the labelled corpus does not
hold (quoted JSON keys, pictographs inside a word, digits of other scripts, id numbers labelled in
languages the rules have no verbs for, allergies outside English), every path that makes a
memory current, and benign look-alikes that must still be saved."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem import NeverStoreViolation
from convmem.ids import new_id
from convmem.memory.normalize import normalize
from convmem.memory.policy import BlockReason, check_text
from convmem.model.admitted import Admitted
from convmem.model.gate_seal import GATE_SEAL
from convmem.service import create_app


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # a quoted key closes its quote before the colon (JSON, PHP/Ruby hashes)
        ('{"password": "Tr0ub4dor&3"}', BlockReason.CREDENTIAL),
        ('{"db_password":"kL9#mQ2$vX"}', BlockReason.CREDENTIAL),
        ('{"api_key": "a8f5f167f44f4964e6c998dee827110c9a8f5f16"}', BlockReason.CREDENTIAL),
        ("{'token' => 'q8Zr2Lm9Xw4Tp7Kd'}", BlockReason.CREDENTIAL),
        # credentials inside URLs and YAML
        ("notes: https://bob:hunter2@example.org/wiki", BlockReason.CREDENTIAL),
        ("db:\n  user: admin\n  password: S3cr3tPa55", BlockReason.CREDENTIAL),
        # pictographs wedged inside a word or a number
        ("my p🙂a🙂s🙂s🙂w🙂o🙂r🙂d is swordfish", BlockReason.CREDENTIAL),
        ("my card: 4🙂1🙂1🙂1 1111 1111 1111", BlockReason.PAYMENT_CARD),
        ("PIN 1️⃣2️⃣3️⃣4️⃣", BlockReason.CREDENTIAL),
        # digits of another script are the same digits (Arabic-Indic, Persian, Devanagari)
        ("بطاقتي card ٤١١١ ١١١١ ١١١١ ١١١١", BlockReason.PAYMENT_CARD),
        ("ssn ۱۲۳-۴۵-۶۷۸۹", BlockReason.GOVERNMENT_ID),
        ("card number ४१११११११११११११११", BlockReason.PAYMENT_CARD),
        # full-width digits and letters
        ("my card is ４１１１ １１１１ １１１１ １１１１", BlockReason.PAYMENT_CARD),
        ("ｐａｓｓｗｏｒｄ ｉｓ swordfish", BlockReason.CREDENTIAL),
        # ids labelled in languages whose verbs the rules do not list: a checksum decides
        ("mitt personnummer är 811228-9874", BlockReason.GOVERNMENT_ID),
        ("TC kimlik numaram 10000000146", BlockReason.GOVERNMENT_ID),
        ("mój PESEL to 44051401359", BlockReason.GOVERNMENT_ID),
        ("min henkilötunnus on 131052-308T", BlockReason.GOVERNMENT_ID),
        # mixed-language sentences
        ("Ich habe Krebs, but I'm fine", BlockReason.HEALTH),
        ("My password ist Sonnenblume123", BlockReason.CREDENTIAL),
        # an allergy is health data in every language the rules read, as in English
        ("soy alérgico al marisco", BlockReason.HEALTH),
        ("ich bin allergisch gegen Nüsse", BlockReason.HEALTH),
        ("je suis allergique aux arachides", BlockReason.HEALTH),
        ("sono allergico alle noci", BlockReason.HEALTH),
        ("sou alérgico a amendoim", BlockReason.HEALTH),
        ("ik ben allergisch voor noten", BlockReason.HEALTH),
        ("ich bin laktoseintolerant", BlockReason.HEALTH),
        # a password noun, what it opens, then the value, with no verb between, in 7 languages
        ("My wifi password hunter2xyz99", BlockReason.CREDENTIAL),
        ("WLAN-Passwort Sommer2024!", BlockReason.CREDENTIAL),
        ("mot de passe wifi Bl3u!mer", BlockReason.CREDENTIAL),
        ("contraseña del wifi Sol2024!x", BlockReason.CREDENTIAL),
        ("la password wifi Gatto2023!", BlockReason.CREDENTIAL),
        ("senha wifi Praia2024x", BlockReason.CREDENTIAL),
        ("wachtwoord wifi Fiets2024!", BlockReason.CREDENTIAL),
        ("password for my bank Sommer2024", BlockReason.CREDENTIAL),
    ],
)
def test_disguised_disclosures_are_refused(text: str, reason: BlockReason) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "great job👍thanks",
        "I ❤️ Paris",
        "room 12🙂34 is free",
        "version 2.0👉3.1 migration",
        '{"password_min_length": 12}',
        '{"password": "<your password>"}',
        "https://example.com/user:profile@2x.png",
        "git clone git@github.com:org/repo.git",
        "personnummer format is YYMMDD-XXXX",
        "the PESEL field has 11 digits",
        "Kimlik kartımı evde unuttum",
        "my passport expires in 2031",
        "call 10000000146 tomorrow",
        "tel: ٠١٢٣٤٥٦٧٨٩",
        "أحب القهوة 3 مرات يوميا",
        "mon chat est allergique au poulet",
        "ich bin tolerant",
        "password for user123 was reset",
        "the password hash SHA256 is used",
        "my password manager 1Password8 works",
        "password 2024-05-01 expired",
    ],
)
def test_benign_look_alikes_pass(text: str) -> None:
    assert check_text(text).allowed


def test_digits_of_every_script_become_ascii_not_look_alike_letters() -> None:
    # Arabic-Indic one and five resemble Latin letters in the confusables list; a digit stays
    # a digit.
    assert normalize("١٢٣٤٥ ۶۷۸۹۰ ०१२") == "12345 67890 012"


def test_every_caller_field_passes_the_policy_and_a_block_writes_nothing(
    alice: convmem.Scope,
) -> None:
    secret = "my password is Tr0ub4dor&3"
    for notice in (
        alice.remember(secret),
        alice.remember("I like tea", subject=secret),
        alice.remember("I like tea", subject="ssn 123-45-6789"),
        alice.propose("Likes tea", subject='{"api_key": "q8Zr2Lm9Xw4Tp7Kd"}'),
        alice.remember("I like tea", subject="p🙂a🙂s🙂s🙂w🙂o🙂r🙂d is swordfish"),
    ):
        assert notice.status == "blocked"
        assert notice.memory is None
    with pytest.raises(NeverStoreViolation):
        alice.remember("I like tea", subject=secret, strict=True)
    assert alice.memories.list(status=None, include_expired=True) == []


def test_edit_with_a_disclosure_keeps_the_old_memory(alice: convmem.Scope) -> None:
    kept = alice.remember("I prefer window seats")
    assert kept.memory is not None
    refused = alice.memories.update(kept.memory.id, "mein Passwort lautet Sonnenblume")
    assert refused.status == "blocked"
    rows = alice.memories.list(status=None, include_expired=True)
    assert [(m.id, m.text, m.status) for m in rows] == [
        (kept.memory.id, "I prefer window seats", "confirmed")
    ]


def test_confirm_checks_the_proposal_again(memory: convmem.Memory, alice: convmem.Scope) -> None:
    """A proposal written before a rule existed (here: put straight into the store) is refused
    when the user confirms it, and stays a proposal."""
    legit = alice.propose("Likes jazz")
    assert legit.memory is not None
    stale = replace(
        legit.memory, id=new_id("mem"), text="soy alérgico al marisco", subject_key="marisco"
    )
    with memory.store.write() as tx:  # sealed by hand: the gate of today would refuse it
        tx.insert_memory("acme", Admitted(stale, GATE_SEAL))
    with pytest.raises(NeverStoreViolation) as refused:
        alice.memories.confirm(stale.id)
    assert refused.value.reason == "health"
    assert "marisco" not in str(refused.value)
    assert alice.memories.get(stale.id).status == "proposed"
    assert alice.memories.confirm(legit.memory.id).status == "confirmed"


def test_http_patch_with_a_disclosure_is_refused_and_writes_nothing(
    memory: convmem.Memory,
) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    h = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(memory), raise_server_exceptions=True) as client:
        made = client.post("/v1/memories", json={"text": "I prefer aisle seats"}, headers=h)
        memory_id = made.json()["memory"]["id"]
        for text in (
            '{"password": "Tr0ub4dor&3"}',
            "card ٤١١١ ١١١١ ١١١١ ١١١١",
            "ik ben allergisch voor noten",
        ):
            patched = client.patch(f"/v1/memories/{memory_id}", json={"text": text}, headers=h)
            assert patched.status_code == 422
            assert patched.json()["code"] == "never_store"
            assert text not in patched.text
        created = client.post(
            "/v1/memories", json={"text": "I like tea", "subject": "pw: Tr0ub4dor&3"}, headers=h
        )
        assert created.status_code == 422
    rows = memory.scope("acme", "alice").memories.list(status=None, include_expired=True)
    assert [(m.text, m.status) for m in rows] == [("I prefer aisle seats", "confirmed")]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the password is starling", True),
        ("My password is starling.", True),
        ("password: butterfly", True),
        ("The wifi password is Sterling!", True),
        ("my password is expiring.", False),
        ("my password is expiring soon", False),
        ("The password is working now.", False),
        ("my password is missing", False),
        ("the password is only", False),
    ],
)
def test_a_sentence_ending_on_a_plain_word_after_password_gives_its_value(
    text: str, secret: bool
) -> None:
    # a word ending like a participle ("-ing") or an adverb ("-ly") describes the password only
    # when it is such a description; the last word of "the password is starling" is the value
    assert check_text(text).allowed is not secret
