"""Normalisation before the never-store detectors: the text a rule sees is the text a reader sees.

An adversarial writer hides a disclosure from pattern rules in ways a human reader does not
notice: compatibility forms (full-width letters, ligatures), letters from another script that
look like Latin ones (Cyrillic "er" and "a" inside "password"), invisible characters inside a
word, letters spaced or dotted apart ("p a s s w o r d"), or the whole statement encoded as base64
or hex. This module undoes each, so that rules written for plain text hold for the whole class:

* NFKC, then invisible (format) characters dropped;
* a confusable *skeleton*: every non-ASCII character that Unicode's confusables list (UTS #39, as
  packaged by ``confusable_homoglyphs``) gives as a look-alike of an ASCII letter or digit is
  replaced by it. Accented Latin letters are not confusables, so German, French, Spanish ...
  text keeps its letters;
* every Unicode decimal digit (Arabic-Indic, Persian, Devanagari ...) as its ASCII digit, and
  pictographs wedged inside a word or number ("p🙂a🙂s🙂s") dropped;
* runs of single letters joined by one separator each are closed up;
* base64 and hex runs that decode to readable text are returned separately, to be checked too.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from functools import lru_cache
from importlib.resources import files
from typing import Final

# Dropped outright: every format character (Unicode category Cf: zero-width spaces and joiners,
# bidi controls, the BOM, soft hyphen, tag characters ...). The ranges are Unicode 15's Cf set; a
# test compares them with ``unicodedata`` so a new Python's Unicode data cannot drift past them.
INVISIBLE: Final = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)
_PUNCT: Final = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
_WS: Final = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _skeleton_table() -> dict[int, str]:
    """Non-ASCII look-alikes of ASCII letters and digits (UTS #39 confusables), as a table."""
    data = json.loads(
        files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8")
    )
    table: dict[int, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii():
            continue
        for entry in entries:
            glyph = entry["c"]
            if len(glyph) == 1 and glyph.isascii() and glyph.isalnum():
                table[ord(char)] = glyph
                break
    return table


# A decimal digit of any other script (Arabic-Indic, Persian, Devanagari, Thai ...): NFKC folds
# full-width digits but leaves these, and a card or id number written in them is the same number.
# Matched by the regex engine's own Unicode digit class, so no table of every code point is built.
_OTHER_SCRIPT_DIGIT: Final = re.compile(r"(?![0-9])\d")


def _ascii_digit(m: re.Match[str]) -> str:
    return str(unicodedata.decimal(m.group(0)))


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str]:
    """Look-alike letters, quotes and dashes in one pass. Digits are made ASCII before it, so a
    digit of another script is that digit, never the Latin letter it resembles."""
    return {**_skeleton_table(), **_PUNCT}


# Four or more single letters each followed by one separator: "p a s s w o r d", "p.a.s.s".
_SPACED: Final = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ ._*·-]){3,}[^\W\d_](?![^\W\d_])")
_SEPARATOR: Final = re.compile(r"[ ._*·-]")


def _close_up(m: re.Match[str]) -> str:
    return _SEPARATOR.sub("", m.group(0))


# Pictographs (and their variation selectors and skin tones) wedged between two letters or digits
# split a word for a pattern but not for a reader ("p🙂a🙂s🙂s", "4🙂1🙂1🙂1"): they are dropped
# there. Elsewhere an emoji separates words and stays.
_WEDGED_SYMBOL: Final = re.compile(
    r"(?<=[^\W_])[\u2190-\u21ff\u2300-\u23ff\u2460-\u24ff\u25a0-\u27bf\u2900-\u297f"
    r"\u2b00-\u2bff\u20dd-\u20e4\ufe0e\ufe0f\U0001f000-\U0001faff]+(?=[^\W_])"
)


def as_read(text: str) -> str:
    """NFKC with invisible characters dropped: the letters a reader sees (full-width letters,
    ligatures and zero-width characters undone), and nothing folded that a reader would tell
    apart. The intent grammar reads this; ``normalize`` starts from it."""
    if text.isascii():
        return text
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def normalize(text: str) -> str:
    """NFKC, invisibles dropped, confusable skeleton, digits of every script as ASCII,
    pictographs inside words dropped, spaced-out letters closed up, quotes and dashes unified,
    whitespace collapsed."""
    norm = as_read(text)
    if not norm.isascii():
        norm = _OTHER_SCRIPT_DIGIT.sub(_ascii_digit, norm).translate(_fold_table())
        norm = _WEDGED_SYMBOL.sub("", norm)
    norm = _SPACED.sub(_close_up, norm)
    return _WS.sub(" ", norm).strip()


# Base64 of a short disclosure is short ("I'm gay" is 12 characters): runs of 8+ base64
# characters are tried when they hold a digit, "+/=_-" or a capital after the first character
# (ordinary lower-case words are not base64 of text); hex runs of 16+ digits (8 bytes).
_BASE64_RUN: Final = re.compile(
    r"(?<![A-Za-z0-9+/_-])(?=[A-Za-z0-9+/_-]*[0-9+/=_-]|[A-Za-z0-9+/_-]+[A-Z])"
    r"[A-Za-z0-9+/_-]{8,}={0,2}(?![A-Za-z0-9+/=_-])"
)
_HEX_RUN: Final = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_MAX_DECODED: Final = 4


def _readable(raw: bytes) -> str | None:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 4 or not decoded.isprintable():
        return None
    # text, not binary: mostly letters, marks and digits (at most one character in four is
    # punctuation or a symbol), and more than one word (or a script that writes without
    # spaces: two or more CJK characters)
    if decoded.lstrip()[:1] in ("{", "[") and decoded.rstrip()[-1:] in ("}", "]"):
        return decoded  # a JSON document: its punctuation is structure, its strings are text
    shown = [c for c in decoded if not c.isspace()]
    if sum(unicodedata.category(c)[0] in "PS" for c in shown) * 4 > len(shown):
        return None
    if " " in decoded.strip() or sum(ord(c) >= 0x3000 for c in decoded) >= 2:
        return decoded
    return None


def decoded_runs(text: str) -> list[str]:
    """Readable text hidden in base64 or hex runs of ``text`` (at most a few)."""
    found: list[str] = []
    for m in _HEX_RUN.finditer(text):
        decoded = _readable(bytes.fromhex(m.group(0)))
        if decoded is not None:
            found.append(decoded)
    for m in _BASE64_RUN.finditer(text):
        run = m.group(0)
        padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _readable(raw)
        if decoded is not None:
            found.append(decoded)
        if len(found) >= _MAX_DECODED:
            break
    return found[:_MAX_DECODED]


def any_case_pattern(pattern: str) -> str:
    """``pattern`` (a regex over lower-case text in a script with Latin look-alikes, such as
    Cyrillic) as it must read text that was normalised and then lower-cased: a capital "К" is
    the Latin "K" after normalising, so "к" may arrive as "k" at the start of a word while "о"
    arrives as "o" everywhere. Each such letter becomes a class of the forms it may take;
    pattern syntax (ASCII) is left as it is."""
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped or ch.isascii():
            out.append(ch)
            if not escaped and ch == "\\":
                escaped = True
                continue
            if not escaped and ch == "[":
                in_class = True
            elif not escaped and ch == "]":
                in_class = False
            escaped = False
            continue
        forms = sorted({ch, normalize(ch), normalize(ch.upper()).lower()})
        joined = "".join(forms)
        out.append(joined if in_class or len(forms) == 1 else f"[{joined}]")
    return "".join(out)
