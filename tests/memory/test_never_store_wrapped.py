"""Never-store under trivial wrapping (issue 30): JSON escapes, percent-encoding, HTML entities,
markup, a trailing period, leetspeak, spelled-out digits, short base64, and the languages the
policy claims (Turkish credentials, Dutch health, Spanish politics). Each case reproduces a text
that main let through; the benign look-alikes beside them must still be saved."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

import convmem
from convmem.memory.policy import BlockReason, check_text
from convmem.memory.readings import readings, respell, unwrap

CARD_WORDS = "four five three nine one four eight eight zero three four three six four six seven"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # JSON string escapes (the example, and a document inside a JSON string)
        (r'{"note":"la contrase\u00f1a del router es Girasol_58"}', BlockReason.CREDENTIAL),
        (r'"{\"text\": \"Ich habe seit drei Jahren Depressionen\"}"', BlockReason.HEALTH),
        (r'{"memo": "I have\ntype 2 diabetes"}', BlockReason.HEALTH),
        # percent-encoding and HTML entities
        ("save?text=Tengo%20c%C3%A1ncer%20de%20mama", BlockReason.HEALTH),
        ("<p>I&#39;m g&#97;y</p>", BlockReason.SENSITIVE_CATEGORY),
        # markdown and HTML markup inside the sentence
        ("I have **diabetes**", BlockReason.HEALTH),
        ("Ich bin **schwul**", BlockReason.SENSITIVE_CATEGORY),
        ("Tengo `cáncer` de mama", BlockReason.HEALTH),
        ("my pass<b>word</b> is Falcon!9921", BlockReason.CREDENTIAL),
        # a trailing period must not flip a spaced code
        ("The garage door code is 4 8 1 9.", BlockReason.CREDENTIAL),
        ("My PIN: 4 8 1 9!", BlockReason.CREDENTIAL),
        # leetspeak and look-alike symbols
        ("my passw0rd is swordfish", BlockReason.CREDENTIAL),
        ("p@ssword: Bluebird", BlockReason.CREDENTIAL),
        ("I'm d1abet1c", BlockReason.HEALTH),
        ("I am a pr@ctising Musl1m", BlockReason.SENSITIVE_CATEGORY),
        # spelled-out digits, in several languages
        ("card: " + CARD_WORDS, BlockReason.PAYMENT_CARD),
        ("my PIN is four eight one nine", BlockReason.CREDENTIAL),
        ("el PIN de mi tarjeta es cuatro ocho uno nueve", BlockReason.CREDENTIAL),
        ("Meine PIN ist vier acht eins neun", BlockReason.CREDENTIAL),
        # short base64 of a disclosure
        ("note: " + base64.b64encode(b"I'm gay").decode(), BlockReason.SENSITIVE_CATEGORY),
        ("note: " + base64.b64encode(b"I have HIV").decode(), BlockReason.HEALTH),
        # the claimed languages
        ("Wi-Fi şifresi: Deniz!7788", BlockReason.CREDENTIAL),
        ("Banka şifrem Kedi2024x", BlockReason.CREDENTIAL),
        ("Мой пароль от почты: Медведь2024", BlockReason.CREDENTIAL),
        ("Ik heb last van depressies", BlockReason.HEALTH),
        ("Ik heb sinds vorig jaar suikerziekte", BlockReason.HEALTH),
        ("Voté a Podemos en las últimas elecciones", BlockReason.SENSITIVE_CATEGORY),
        ("Soy de izquierdas", BlockReason.SENSITIVE_CATEGORY),
        ("J'ai un casier judiciaire", BlockReason.SENSITIVE_CATEGORY),
        ("Ik heb op GroenLinks gestemd", BlockReason.SENSITIVE_CATEGORY),
        # structure that labels a value: a form field, an XML element, a markdown table
        ('<input name="password" value="Heron#6621">', BlockReason.CREDENTIAL),
        ("<password>Seal!Point88</password>", BlockReason.CREDENTIAL),
        ("| site | password |\n|---|---|\n| bank | Walrus!4455 |", BlockReason.CREDENTIAL),
        ("/save?m=Ik+ben+lesbisch", BlockReason.SENSITIVE_CATEGORY),
        # the paraphrases of a refused turn
        ("I log in to the bank with Falcon!9921.", BlockReason.CREDENTIAL),
        ("I use tulip-rain-44 for gmail", BlockReason.CREDENTIAL),
    ],
)
def test_wrapped_disclosures_are_refused(text: str, reason: BlockReason) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == reason


@pytest.mark.parametrize(
    "text",
    [
        # talking about a password in Turkish (the noun's suffixes are not a value)
        "Şifremi unuttum",
        "Şifre sıfırlama sayfası çalışmıyor",
        "Parolanız en az 8 karakter olmalı",
        # a Cyrillic word whose look-alike letter becomes a digit ("быть" reads "6ыть")
        "Пароль должен быть длинным",
        # escapes in a JSON document are not part of a value
        r'{"memory": "The password reset\npage is broken"}',
        r'"{\"text\": \"Mein Passwort ist abgelaufen\"}"',
        # numbers in words that are not a code; leet that is not a disclosure
        "Buy four eggs, two cups of flour and one onion",
        "Count to ten: one two three four five six seven eight nine ten",
        "I love c0ffee and pyth0n",
        "version 1.2.3.4 fixed the login bug",
        # politics and prison as topics
        "Voy a votar mañana",
        "Estudio ciencias políticas en Madrid",
        "Ich habe eine Doku über das Gefängnis gesehen",
        "Ik heb last van de hitte",
        # base64 that is not text, and a short base64 of a harmless sentence
        "I use Python3 for work",
        "I log in to the bank with my phone",
        "Soy del Real Madrid",
        "build artefact c2hhMjU2OmFiY2RlZg==",
        "note: " + base64.b64encode(b"buy milk").decode(),
    ],
)
def test_benign_look_alikes_pass(text: str) -> None:
    assert check_text(text).allowed


WRAPPINGS: dict[str, Callable[[str], str]] = {
    "json": lambda t: json.dumps({"note": t}),
    "json in json": lambda t: json.dumps(json.dumps({"text": t})),
    "url": lambda t: "https://example.org/save?q=" + quote(t),
    "entities": lambda t: "".join(f"&#{ord(c)};" if c in "aeiou" else html.escape(c) for c in t),
    "html": lambda t: f"<div><p>{t}</p></div>",
    "bold": lambda t: f"**{t}**",
    "period": lambda t: t + ".",
    "base64": lambda t: "see " + base64.b64encode(t.encode()).decode(),
}
POSITIVES = [
    ("my bank password is Quokka#3141", BlockReason.CREDENTIAL),
    ("mi contraseña es Pelícano_77", BlockReason.CREDENTIAL),
    ("IBAN GB82 WEST 1234 5698 7654 32", BlockReason.BANK_ACCOUNT),
    ("I was diagnosed with epilepsy", BlockReason.HEALTH),
    ("je suis enceinte", BlockReason.HEALTH),
    ("ik ben moslim", BlockReason.SENSITIVE_CATEGORY),
    ("the user probably has bipolar disorder", BlockReason.INFERRED_SENSITIVE_TRAIT),
]
BENIGN = [
    "I prefer window seats on long flights",
    "Mi color favorito es el azul",
    "Ich arbeite in der Krebsforschung",
]


@pytest.mark.parametrize("wrap", sorted(WRAPPINGS))
def test_every_wrapping_of_a_disclosure_is_refused_and_of_benign_text_passes(wrap: str) -> None:
    wrapped = WRAPPINGS[wrap]
    for text, reason in POSITIVES:
        assert check_text(wrapped(text)).reason == reason, (wrap, reason)
    for text in BENIGN:
        assert check_text(wrapped(text)).allowed, wrap


def test_plain_text_has_one_reading_and_the_text_as_written_comes_first() -> None:
    plain = "Remember that I prefer aisle seats"
    assert list(readings(plain)) == [plain]
    wrapped = r'{"note": "I have **diabetes**"}'
    found = list(readings(wrapped))
    assert found[0] == wrapped
    assert "note: I have diabetes." in found


def test_unwrap_and_respell_undo_each_wrapping() -> None:
    assert unwrap(r"la contrase\u00f1a") == "la contraseña"
    assert unwrap("Tengo%20c%C3%A1ncer") == "Tengo cáncer"
    assert unwrap("I &lt;3 <b>pass</b>word") == "I <3 password"
    assert unwrap("[my notes](https://x.org) and `code`") == "my notes and code"
    assert respell("my p@ssw0rd") == "my password"
    assert respell("PIN four eight one nine") == "PIN 4819"
    assert respell("code 4.8.1.9 and card double four") == "code 4819 and card double four"
    assert respell("I_have_diabetes") == "I have diabetes"
    # numbers and keys are not leet: a run of digits stays, a token with many digits stays
    assert respell("iPhone15 and B12") == "iPhone15 and B12"
    assert respell("sk8Tz3Qw1Lm0Xp7R2") == "sk8Tz3Qw1Lm0Xp7R2"


def test_a_reading_never_removes_evidence() -> None:
    # de-leeting would turn the password's digits into letters and unwrapping would merge
    # fields; the text as written is still checked, so both stay refused
    assert check_text("password: Tr0ub4dor&3").reason == BlockReason.CREDENTIAL
    assert check_text('{"password": "hunter2x9", "note": "ok"}').reason == BlockReason.CREDENTIAL
    assert check_text("card 4539 1488 0343 6467 (spelled: none)").reason == (
        BlockReason.PAYMENT_CARD
    )


def test_remember_refuses_wrapped_secrets_and_writes_nothing(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "m.db") as memory:
        alice = memory.scope("acme", "alice")
        for text in (
            r'{"note":"la contrase\u00f1a del router es Girasol_58"}',
            "The garage door code is 4 8 1 9.",
            "I'm d1abet1c",
            "Voté a Podemos en las últimas elecciones",
        ):
            notice = alice.remember(text)
            assert notice.status == "blocked" and notice.memory is None
        assert alice.memories.list() == []
        kept = alice.remember(json.dumps({"note": "I prefer aisle seats"})).memory
        assert kept is not None and [m.id for m in alice.memories.list()] == [kept.id]


def test_hostile_structure_never_raises() -> None:
    # nested past the JSON parser's depth, unbalanced tags and escapes: read as plain text
    assert check_text("[" * 5000 + "]" * 5000).allowed
    assert check_text('{"a":' * 3000 + "1" + "}" * 3000).allowed
    assert check_text("<x>" * 2000 + "\\u00" * 2000 + "%4" * 2000).allowed
    assert check_text("[" * 3000 + '"my password is Falcon!9921"' + "]" * 3000).reason == (
        BlockReason.CREDENTIAL
    )


@pytest.mark.parametrize(
    "text",
    [
        "| service | password |\n|---|---|\n| bank | Walrus!4455 |",
        "> Sou de direita\n>\n> — saved note",
    ],
)
def test_a_memory_is_judged_as_given_not_only_with_its_lines_joined(
    text: str, tmp_path: Path
) -> None:
    """A memory is stored with its lines joined, which undoes a table's or a quote's structure:
    found by benchmarks/never_store_paths.py, where both were saved through remember."""
    assert not check_text(text).allowed
    with convmem.open(tmp_path / "m.db") as mem:
        alice = mem.scope("acme", "alice")
        assert alice.remember(text).status == "blocked"
        assert alice.memories.list(status=None) == []


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("my pa55word is starling", False),  # held-out 3's one miss: the noun disguised
        ("my pa$$word: sunflower", False),
        ("my passw0rd is weak", True),  # about the password, not giving it
        ("I reset my passw0rd yesterday", True),
    ],
)
def test_a_disguised_password_noun_gives_away_its_value(text: str, allowed: bool) -> None:
    assert check_text(text).allowed is allowed
