"""Content detectors behind the never-store policy (see ``policy.py`` for the rules they serve).

Every detector takes prepared text and returns a :class:`Finding` or ``None``. A finding carries a
fixed, human-readable ``detail`` written here, never anything cut from the input, so a decision can
be logged, shown and audited without leaking what it refused.

Two kinds of detector live here:

* **structured secrets** (credentials, payment cards, bank accounts, government ids) work on the
  NFKC-normalised text with its case kept, because key formats are case-sensitive; numbers are
  validated with their checksums (Luhn, IBAN mod-97) so that order numbers, ISBNs and the like
  pass;
* **language detectors** (health, other GDPR art. 9 categories, inferred traits) work on a
  lower-cased copy with English contractions expanded ("i'm" -> "i am"), and look for a *subject*
  (the user, "I", a person close to them) bound to a *sensitive term* by a verb, so that talking
  *about* a topic ("I read about diabetes research") passes while disclosing it ("I have
  diabetes") does not.

All patterns are bounded (no nested unbounded repetition), so a check is linear in the text.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Final, Literal

from convmem.memory.normalize import normalize

Category = Literal[
    "credential",
    "payment_card",
    "bank_account",
    "government_id",
    "health",
    "sensitive_category",
    "inferred_sensitive_trait",
]


@dataclass(frozen=True, slots=True)
class Finding:
    category: Category
    detail: str


@dataclass(frozen=True, slots=True)
class Prepared:
    """The two views of one input that the detectors read."""

    text: str  # normalize(): NFKC, invisibles dropped, confusable skeleton, whitespace collapsed
    sem: str  # ``text`` lower-cased with contractions expanded, for the language detectors


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

# Expanded in one pass so the language patterns only need to know "i am", "i have", ...
_CONTRACTION: Final = re.compile(
    r"\b(?:(i)'?m|(i)'?ve|(you|we|they)'(ve|re)|(he|she|it)'s|(i|you|we|they|he|she)'d)\b|n't\b"
)
_EXPANDED: Final = {"ve": "have", "re": "are"}


def _expand(m: re.Match[str]) -> str:
    if m.group(1):
        return "i am"
    if m.group(2):
        return "i have"
    if m.group(3):
        return f"{m.group(3)} {_EXPANDED[m.group(4)]}"
    if m.group(5):
        return f"{m.group(5)} is"
    if m.group(6):
        return f"{m.group(6)} would"
    return " not"


def prepare(text: str) -> Prepared:
    norm = normalize(text)
    return Prepared(norm, _CONTRACTION.sub(_expand, norm.lower()))


# ---------------------------------------------------------------------------------------------
# Validators (public so they can be tested directly)
# ---------------------------------------------------------------------------------------------


def luhn_valid(number: str) -> bool:
    """Luhn (mod 10) check over the ASCII digits of ``number``; separators are ignored."""
    digits = [ord(c) - 48 for c in number if "0" <= c <= "9"]
    if len(digits) < 2:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# Official lengths from the SWIFT IBAN registry; an IBAN of the wrong length is not an IBAN.
IBAN_LENGTHS: Final[dict[str, int]] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_valid(iban: str) -> bool:
    """True if ``iban`` (spaces, any case) has a known country, its registry length, mod-97 = 1."""
    compact = iban.replace(" ", "").upper()
    if not compact.isascii() or not compact.isalnum() or len(compact) < 15:
        return False
    country, check = compact[:2], compact[2:4]
    if IBAN_LENGTHS.get(country) != len(compact) or not check.isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    # Letters become 10..35; int() of the resulting decimal string is exact at any length.
    numeric = "".join(str(int(c, 36)) for c in rearranged)
    return int(numeric) % 97 == 1


def aba_routing_valid(number: str) -> bool:
    """ABA routing number checksum (3-7-1 weights) over exactly nine digits."""
    if len(number) != 9 or not number.isascii() or not number.isdigit():
        return False
    weights = (3, 7, 1) * 3
    return sum(int(c) * w for c, w in zip(number, weights, strict=True)) % 10 == 0


def looks_random(token: str) -> bool:
    """Machine-generated secret rather than words or an identifier.

    Generated keys switch between lower case, upper case and digits far more often than words or
    camelCase identifiers do (about every other character for base62, against one switch per
    word), and their characters are spread out (high Shannon entropy).
    """
    core = "".join(c for c in token if c.isascii() and c.isalnum())
    if len(core) < 16:
        return False
    digits = sum(c.isdigit() for c in core)
    if digits < 2 or digits == len(core):
        return False

    def cls(c: str) -> int:
        return 0 if c.isdigit() else 1 if c.islower() else 2

    switches = sum(cls(a) != cls(b) for a, b in itertools.pairwise(core))
    if switches * 4 < len(core):
        return False
    counts: dict[str, int] = {}
    for c in core:
        counts[c] = counts.get(c, 0) + 1
    entropy = -sum(n / len(core) * math.log2(n / len(core)) for n in counts.values())
    return entropy >= 3.0


HEX_OR_UUID: Final = re.compile(
    r"(?:[0-9a-f]{7,64}|[0-9A-F]{7,64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)
