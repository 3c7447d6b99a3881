"""Normalisation before the never-store rules: what a reader sees is what a rule sees."""

from __future__ import annotations

import base64
import sys
import unicodedata

import pytest

from convmem.memory.detect_scanner import scanner_finds_secret
from convmem.memory.normalize import INVISIBLE, decoded_runs, normalize
from convmem.memory.policy import BlockReason, check_text


def test_every_format_character_is_dropped() -> None:
    missing = [
        hex(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) == "Cf" and not INVISIBLE.match(chr(cp))
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("hidden", "plain"),
    [
        ("my p\u0430ssw\u043erd", "my password"),  # Cyrillic a, o
        ("\u0440\u0430\u0455\u0455word", "password"),  # Cyrillic er, a, dze
        ("pass\u200bword\u2060", "password"),
        ("\uff50\uff41\uff53\uff53", "pass"),  # full-width
        ("p a s s w o r d", "password"),
        ("p.a.s.s.w.o.r.d", "password"),
        ("P-A-S-S-W-O-R-D:", "PASSWORD:"),
    ],
)
def test_hidden_forms_normalise_to_the_plain_word(hidden: str, plain: str) -> None:
    assert normalize(hidden) == plain


@pytest.mark.parametrize("text", ["Contraseña für Müller, façade, Ærø", "Straße in Köln"])
def test_accented_latin_letters_are_kept(text: str) -> None:
    assert normalize(text) == text


def test_base64_and_hex_runs_are_decoded_and_checked() -> None:
    secret = "mi contraseña es Tortuga#88"
    b64 = base64.b64encode(secret.encode()).decode()
    assert decoded_runs(f"note {b64}") == [secret]
    assert decoded_runs(secret.encode().hex()) == [secret]
    assert check_text(f"keep {b64}").reason == BlockReason.CREDENTIAL
    # binary or identifier-like runs are not text
    assert decoded_runs("commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b") == []
    assert check_text("the build hash is 9f86d081884c7d659a2feaa0c55ad015").allowed


def test_detect_secrets_layer_names_the_provider_and_skips_prose() -> None:
    assert scanner_finds_secret("mailchimp " + "0123456789abcdef" * 2 + "-us12") is not None
    assert scanner_finds_secret("I like tea and long walks in the countryside") is None
    assert scanner_finds_secret("order 12345678901 shipped") is None
