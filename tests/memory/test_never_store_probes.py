"""An adversarial pass over the never-store policy from outside (session 41): a disclosure hidden
the ways a writer or a model can hide one must be refused, on the policy and through a memory's
every caller field on a real store.

The first two groups failed before ``readings.unmarked``: an invisible character used as the space
between words (``normalize`` drops it, closing "my\\u200bpassword\\u200bis" into one word), and a
mark laid over a letter ("pássword" decomposed, "pas\\u0336sword" struck through), which the
confusable skeleton keeps as it keeps every accented letter. The rest held when probed and stay as
regression tests."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.memory.policy import BlockReason, check_text
from convmem.service import create_app

SECRET = "My password is Falcon!9921"
C = BlockReason.CREDENTIAL


def _u_escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


INVISIBLE_SEPARATORS = [
    pytest.param("My\u200bpassword\u200bis\u200bFalcon!9921", id="zero-width-space"),
    pytest.param("My\u2060password\u2060is Falcon!9921", id="word-joiner"),
    pytest.param("My password\u00adis Falcon!9921", id="soft-hyphen"),
    pytest.param("My\u180epassword\u180eis Falcon!9921", id="mongolian-vowel-separator"),
    pytest.param("My\ufeffpassword\ufeffis Falcon!9921", id="byte-order-mark"),
]
MARKED_LETTERS = [
    pytest.param("My pa\u0301ssword is Falcon!9921", id="decomposed-acute"),
    pytest.param("My p\u00e1ssw\u00f6rd is Falcon!9921", id="precomposed-accents"),
    pytest.param("My pas\u0336sword is Falcon!9921", id="strikethrough"),
    pytest.param("My pas\u0332sword is Falcon!9921", id="underline"),
]
HELD = [
    pytest.param(json.dumps({"note": SECRET}).replace("a", "\\u0061"), C, id="json-u-escapes"),
    pytest.param('{"n":"' + _u_escaped(SECRET) + '"}', C, id="json-all-u-escapes"),
    pytest.param(json.dumps(json.dumps({"password": "Falcon!9921"})), C, id="json-in-json"),
    pytest.param("<p>My <b>password</b> is <i>Falcon!9921</i></p>", C, id="html"),
    pytest.param("My pass<!-- x -->word is Falcon!9921", C, id="html-comment"),
    pytest.param("My &#x70;assword is Falcon&#33;9921", C, id="html-entities"),
    pytest.param("My **password** is `Falcon!9921`", C, id="markdown"),
    pytest.param(base64.b64encode(SECRET.encode()).decode(), C, id="base64"),
    pytest.param(
        json.dumps({"d": base64.b64encode(SECRET.encode()).decode()}), C, id="base64-in-json"
    ),
    pytest.param(SECRET.encode().hex(), C, id="hex"),
    pytest.param(quote(SECRET), C, id="percent-encoded"),
    pytest.param(quote_plus(SECRET), C, id="form-encoded"),
    pytest.param(quote(quote(SECRET)), C, id="percent-encoded-twice"),
    pytest.param(f"[x](https://e.com/?q={quote(SECRET)})", C, id="markdown-link-query"),
    pytest.param("My \\x70assword is Falcon!9921", C, id="backslash-x-escape"),
    pytest.param("My \u0440\u0430ssword is Falcon!9921", C, id="cyrillic-homoglyphs"),
    pytest.param("My passw\u03bfrd is Falcon!9921", C, id="greek-homoglyph"),
    pytest.param(
        "My \U0001d429\U0001d41a\U0001d42c\U0001d42c\U0001d430\U0001d428\U0001d42b"
        "\U0001d41d is Falcon!9921",
        C,
        id="math-bold",
    ),
    pytest.param("My pass\U000e0041word is Falcon!9921", C, id="tag-character"),
    pytest.param("My \u202epassword is Falcon!9921", C, id="bidi-override"),
    pytest.param("p a s s w o r d: Falcon!9921", C, id="spaced-letters"),
    pytest.param("my pin is \uff14\uff18\uff12\uff11", C, id="full-width-pin"),
    pytest.param("my pin is \u0664\u0668\u0662\u0661", C, id="arabic-indic-pin"),
    pytest.param(
        "my card number is \uff14\uff11\uff11\uff11 \uff11\uff11\uff11\uff11 "
        "\uff11\uff11\uff11\uff11 \uff11\uff11\uff11\uff11",
        BlockReason.PAYMENT_CARD,
        id="full-width-card",
    ),
    pytest.param("sk-proj-Xa9fK2mQ7vLp3ZtR8wYb1NcD4eHg6JsU", C, id="openai-project-key"),
    pytest.param("Mein Passwort ist Falcon!9921", C, id="de"),
    pytest.param("Mon mot de passe est Falcon!9921", C, id="fr"),
    pytest.param("Mi contraseña es Falcon!9921", C, id="es"),
    pytest.param("Мой пароль Falcon!9921", C, id="ru"),
    pytest.param("Moje hasło to Falcon!9921", C, id="pl"),
    pytest.param("Şifrem Falcon!9921", C, id="tr"),
    pytest.param("我的密码是Falcon!9921", C, id="zh"),
    pytest.param("私のパスワードはFalcon!9921です", C, id="ja"),
    pytest.param("내 비밀번호는 Falcon!9921 입니다", C, id="ko"),
    pytest.param("Ich habe Diabetes", BlockReason.HEALTH, id="health-de"),
    pytest.param("У меня диабет", BlockReason.HEALTH, id="health-ru"),
    pytest.param("我有糖尿病", BlockReason.HEALTH, id="health-zh"),
    pytest.param("저는 당뇨병이 있어요", BlockReason.HEALTH, id="health-ko"),
]


@pytest.mark.parametrize("text", INVISIBLE_SEPARATORS + MARKED_LETTERS)
def test_invisible_separators_and_marked_letters_are_read_through(text: str) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == C


@pytest.mark.parametrize(("text", "reason"), HELD)
def test_wrapped_encoded_and_foreign_disclosures_are_refused(
    text: str, reason: BlockReason
) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "Je préfère le café noir",
        "Ich möchte Fensterplätze",
        "Prefiero el asiento de la ventana",
        "Lubię zieloną herbatę",
        "Çay içmeyi severim",
        "naïve café résumé",
        "a\u200bb c\u00add",
    ],
)
def test_accents_and_invisibles_alone_do_not_refuse(text: str) -> None:
    assert check_text(text).allowed


@pytest.mark.parametrize("field", ["text", "subject", "scope", "purpose"])
@pytest.mark.parametrize(
    "hidden",
    [
        "My\u200bpassword\u200bis\u200bFalcon!9921",
        "My pa\u0301ssword is Falcon!9921",
        '{"n":"' + _u_escaped(SECRET) + '"}',
    ],
    ids=["invisible-separators", "combining-mark", "json-u-escapes"],
)
def test_every_memory_field_is_gated_and_a_refusal_writes_nothing(
    alice: convmem.Scope, field: str, hidden: str
) -> None:
    kwargs: dict[str, Any] = {}
    text = "I like tea"
    if field == "text":
        text = hidden
    elif field == "scope":
        kwargs["scope"] = f"project:{hidden}"
    else:
        kwargs[field] = hidden
    try:
        notice = alice.remember(text, **kwargs)
    except convmem.InvalidInput:
        # a scope or purpose the API refuses as malformed is refused before the policy: either
        # way nothing is kept
        pass
    else:
        assert notice.status == "blocked"
        assert notice.memory is None
    assert alice.memories.list(status=None, include_expired=True) == []


# Polish and Turkish had no sensitive-category rules (session 41's probe: "Mam cukrzycę",
# "Diyabetim var", "Jestem gejem", "Eşcinselim" were saved); labelled id numbers in Russian,
# Chinese, Japanese and Korean had no label; "Я ВИЧ-положительный" had no rule.
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Mam cukrzycę", BlockReason.HEALTH),
        ("Choruję na cukrzycę", BlockReason.HEALTH),
        ("Zdiagnozowano u mnie depresję", BlockReason.HEALTH),
        ("Moja mama ma białaczkę", BlockReason.HEALTH),
        ("Mój brat choruje na schizofrenię", BlockReason.HEALTH),
        ("Jestem w ciąży", BlockReason.HEALTH),
        ("Jestem gejem", BlockReason.SENSITIVE_CATEGORY),
        ("Należę do partii Razem", BlockReason.SENSITIVE_CATEGORY),
        ("Diyabetim var", BlockReason.HEALTH),
        ("Şeker hastasıyım", BlockReason.HEALTH),
        ("Kanserim", BlockReason.HEALTH),
        ("Annemin diyabeti var", BlockReason.HEALTH),
        ("HIV pozitifim", BlockReason.HEALTH),
        ("Bana depresyon teşhisi kondu", BlockReason.HEALTH),
        ("Eşcinselim", BlockReason.SENSITIVE_CATEGORY),
        ("Müslümanım", BlockReason.SENSITIVE_CATEGORY),
        ("CHP'ye oy verdim", BlockReason.SENSITIVE_CATEGORY),
        ("Я ВИЧ-положительный", BlockReason.HEALTH),
        ("Мой номер паспорта 4509 123456", BlockReason.GOVERNMENT_ID),
        ("我的身份证号是110105194912310021", BlockReason.GOVERNMENT_ID),
        ("내 주민등록번호는 900101-1234567", BlockReason.GOVERNMENT_ID),
        ("マイナンバーは123456789018です", BlockReason.GOVERNMENT_ID),
    ],
)
def test_polish_turkish_and_labelled_ids_in_more_scripts_are_refused(
    text: str, reason: BlockReason
) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "Pracuję nad lekiem na cukrzycę",
        "Mam nadzieję, że będzie ładnie",
        "Mam rakietę tenisową",
        "Czytam o raku płuc",
        "Kanser araştırması yapıyorum",
        "Şekerim, nasılsın?",
        "Sara ile buluştum",
        "Diyabetim yok",
        "Diyabet hakkında bir makale okudum",
        "my mam has a new car",
        "Głosowanie jest w niedzielę",
        "Oy verme günü pazar",
        "паспорт продлён в 2031",
        "护照号码在2024年更新了",
        "パスポートは2025年まで",
        "여권 사진 3장",
    ],
)
def test_polish_turkish_and_id_label_look_alikes_pass(text: str) -> None:
    assert check_text(text).allowed


# A secret split across a memory's subject and its text passed: each half alone is no secret.
# The gate now reads the subject with the text, for every path that makes a memory.
SPLIT = [
    pytest.param("bank password", "Falcon!9921", id="subject-names-it"),
    pytest.param("my password", "is Falcon!9921", id="sentence-split"),
    pytest.param("password", "Falcon!9921", id="bare-label"),
]


@pytest.mark.parametrize(("subject", "text"), SPLIT)
def test_a_secret_split_across_subject_and_text_is_refused_on_every_path(
    memory: convmem.Memory, alice: convmem.Scope, subject: str, text: str
) -> None:
    assert check_text(subject).allowed and check_text(text).allowed  # neither half alone
    for notice in (alice.remember(text, subject=subject), alice.propose(text, subject=subject)):
        assert notice.status == "blocked"
        assert notice.reason == "credential"
    token = memory.keys.create("acme", "user", user="alice").token
    with TestClient(create_app(memory)) as client:
        answer = client.post("/v1/memories", json={"text": text, "subject": subject},
                             headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        assert answer.status_code in (200, 201, 422)
        assert "Falcon" not in answer.text
    assert alice.memories.list(status=None, include_expired=True) == []


@pytest.mark.parametrize(
    ("subject", "text"),
    [
        ("password manager", "uses 1Password8"),
        ("wifi password", "written on the router"),
        ("seat preference", "aisle seat 12C"),
        ("pin code", "changes every 90 days"),
    ],
)
def test_a_subject_read_with_a_benign_text_is_saved(
    alice: convmem.Scope, subject: str, text: str
) -> None:
    assert alice.remember(text, subject=subject).status == "saved"
