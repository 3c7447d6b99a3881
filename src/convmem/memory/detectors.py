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
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

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

    text: str  # NFKC, invisible characters dropped, quotes/dashes unified, whitespace collapsed
    sem: str  # ``text`` lower-cased with contractions expanded, for the language detectors


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

# Zero-width and soft-hyphen characters can be slipped into a key to dodge a regex; drop them.
_INVISIBLE: Final = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff"))
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
    norm = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_PUNCT)
    norm = _WS.sub(" ", norm).strip()
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
_IBAN_LENGTHS: Final[dict[str, int]] = {
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
    if _IBAN_LENGTHS.get(country) != len(compact) or not check.isdigit():
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


def _looks_random(token: str) -> bool:
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


_HEX_OR_UUID: Final = re.compile(
    r"(?:[0-9a-f]{7,64}|[0-9A-F]{7,64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)


# ---------------------------------------------------------------------------------------------
# Credentials
# ---------------------------------------------------------------------------------------------

# Formats whose prefix and shape are distinctive enough that a match is a key. Bodies that could
# also be prose (OpenAI's "sk-" is followed by words in "sk-learn-tutorial") are checked for
# randomness afterwards (the boolean in each entry).
_KEY_FORMATS: Final[tuple[tuple[re.Pattern[str], str, bool], ...]] = (
    (
        re.compile(r"\bsk-ant-(?:api|admin|sid|oat|ort)\d{2}-[A-Za-z0-9_-]{20,}"),
        "an Anthropic API key",
        False,
    ),
    (
        re.compile(r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"),
        "an OpenAI project key",
        True,
    ),
    (re.compile(r"\bsk-[A-Za-z0-9]{20,}"), "an OpenAI-style secret key", True),
    (
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b"),
        "an AWS access key id",
        False,
    ),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b"), "a GitHub token", False),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), "a GitHub fine-grained token", False),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), "a GitLab personal access token", False),
    (re.compile(r"\bgl(?:dt|ptt|rt|cbt|imt|agent)-[A-Za-z0-9_-]{20,}"), "a GitLab token", False),
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), "a Slack token", True),
    (re.compile(r"\bxapp-\d-[A-Za-z0-9-]{10,}"), "a Slack app token", False),
    (
        re.compile(r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"),
        "a Slack webhook URL",
        False,
    ),
    (
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
        "a Discord webhook URL",
        False,
    ),
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), "a Stripe key", False),
    (re.compile(r"\bwhsec_[A-Za-z0-9]{24,}"), "a Stripe webhook secret", False),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), "a Google API key", False),
    (re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), "a Google OAuth token", False),
    (re.compile(r"\b(?:AC|SK)[0-9a-f]{32}\b"), "a Twilio account or API key SID", False),
    (re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}"), "a SendGrid API key", False),
    (re.compile(r"\bkey-[0-9a-f]{32}\b"), "a Mailgun API key", False),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), "an npm token", False),
    (re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), "a PyPI token", False),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), "a Hugging Face token", True),
    (re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), "a Shopify token", False),
    (re.compile(r"\bdop_v1_[a-f0-9]{64}\b"), "a DigitalOcean token", False),
    (re.compile(r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"), "a Square token", False),
    (re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"), "a Telegram bot token", False),
    (
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        "a JSON Web Token",
        False,
    ),
    (
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        "a private key block",
        False,
    ),
    (re.compile(r"PuTTY-User-Key-File-\d"), "a PuTTY private key", False),
    (re.compile(r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}"), "an Azure storage key", False),
)

# scheme://user:password@host. Placeholders such as user:password@ or user:<pass>@ are how
# documentation writes a connection string, not a disclosure, so they pass.
_CONN_STRING: Final = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]*:(?P<pw>[^\s@/]{1,200})@[^\s/@]+"
)
_PLACEHOLDER: Final = re.compile(
    r"""(?ix)^(?:
        pass(?:word|wd)?|pwd|secret|changeme|your[_-]?pass(?:word)?|my[_-]?pass(?:word)?
        |<[^>]*>|\{[^}]*\}|\[[^\]]*\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%s|%\([a-z_]+\)s
        |\*+|x+|\.{3}|\u2026|redacted|hidden|example|dummy|placeholder
    )$"""
)

_BEARER: Final = re.compile(r"\b(?:bearer|token)\s+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)", re.I)
_BASIC_AUTH: Final = re.compile(
    r"\bauthorization:?\s+basic\s+(?P<v>[A-Za-z0-9+/]{12,}={0,2})", re.I
)

# "my password is X", "wifi password: X", "DB_PASSWORD=X", "api key is X", "PIN is 1234" ...
# Three kinds of secret noun, because what counts as a value differs: a password can be any
# word, a PIN or door code is digits, and an API key or token should look machine-made.
_PASSWORD_NOUN: Final = (
    r"pass\s?words?|passwd|passcode|passphrase|pwd|pw|seed\s+phrase|recovery\s+phrase"
    r"|mnemonic(?:\s+phrase)?|master\s+password|login\s+password"
)
_PIN_NOUN: Final = (
    r"pin(?:\s+(?:code|number|no\.?))?|(?:door|gate|alarm|garage|lock|safe|locker|entry|building"
    r"|keypad|access|unlock|lockbox|key\s+safe)\s+code|combination|2fa\s+code|otp|one[\s-]time"
    r"\s+(?:password|code)|verification\s+code|backup\s+codes?|recovery\s+codes?"
    r"|code\s+(?:for|to)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|main\s+)?(?:garage|door"
    r"|gate|alarm|safe|lock|locker|building|keypad|house|apartment|flat|office|lockbox|padlock)"
)
_TOKEN_NOUN: Final = (
    r"api[\s_-]?key|apikey|access[\s_-]?key(?:[\s_-]?id)?|secret(?:[\s_-]?(?:access[\s_-]?)?key)?"
    r"|client[\s_-]?secret|auth[\s_-]?token|access[\s_-]?token|refresh[\s_-]?token|bearer[\s_-]?token"
    r"|session[\s_-]?(?:token|cookie|id)|token|private[\s_-]?key|signing[\s_-]?key"
    r"|encryption[\s_-]?key|licen[cs]e[\s_-]?key|product[\s_-]?key|serial[\s_-]?key"
    r"|webhook[\s_-]?secret|credentials?|wi-?fi\s+key|ssh\s+key"
)
_SECRET_PHRASE: Final = re.compile(
    r"(?<![A-Za-z])(?:(?P<pw>"
    + _PASSWORD_NOUN
    + r")|(?P<pin>"
    + _PIN_NOUN
    + r")|(?P<tok>"
    + _TOKEN_NOUN
    + r"))(?![A-Za-z])"
    # optional "for the admin panel" between noun and verb; bounded to four words
    + r"(?:\s+(?:for|to|of|on|at)\s+(?:[^\s:=]+\s+){0,3}?[^\s:=]+)?"
    + r"(?:\s*(?:[:=]|->|=>)\s*|\s+(?:is|was|are|will\s+be|should\s+be|=)\s+(?:still\s+|now\s+)?)"
    + r"(?P<v>\"[^\"]{1,120}\"|'[^']{1,120}'|`[^`]{1,120}`|[^\s\"'`]+)",
    re.I,
)
_WITH_PASSWORD: Final = re.compile(
    r"\b(?:with|using|use|via)\s+(?:the\s+)?(?P<pw>password|passcode|pin)\s+(?P<v>[^\s\"'`]+)", re.I
)
# Words that follow "password is" when the sentence is *about* the password, not giving it.
_NOT_A_VALUE_WORDS: Final = """
    a an the my your our their his her its this that these those it is are was were be been being
    not no none never also still now just only too very so really quite always usually
    in on at of for to from by with without into onto about over under after before between
    and or but if then than because since when while where which who what how why
    same different wrong right correct incorrect invalid valid expired expiring weak strong secure
    insecure required optional mandatory case sensitive long short hard easy simple complex random
    unique saved stored kept written hidden shared leaked compromised reset changed updated locked
    blocked working broken fine ok okay good bad great terrible useless missing empty blank
    something anything nothing everything somewhere here there below above attached encrypted
    hashed masked needed necessary managed handled out up down off set unset generated rotated
    revoked disabled enabled protected case-sensitive separate personal new old temporary
    default stronger weaker longer shorter one two three four five six seven eight nine ten
    characters chars digits letters numbers symbols words see check ask use try type enter please
    unchanged whatever n/a tbd sent given shown taken known told like all both more less most due
    almost super extremely fairly rather way memorable impossible obvious similar identical unknown
    visible available sufficient insufficient weird silly
"""
_NOT_A_VALUE: Final = frozenset(_NOT_A_VALUE_WORDS.split())
_PIN_VALUE: Final = re.compile(r"#?\d(?:[ -]?\d){3,9}[#*]?")
# Recovery and verification codes such as "8H3K-2J9D-7F4L" or "A7K29Q".
_CODE_VALUE: Final = re.compile(
    r"(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]{3,}){0,5}"
)
# "the login is sam@example.com / Movies4Ever": an account name and its password side by side.
_LOGIN_PAIR: Final = re.compile(
    r"(?i)\b(?:login|log-in|credentials?|username|user\s*name|sign-?in)\s*(?:is|are|:|=)\s*"
    r"[^\s/]{2,80}\s*/\s*(?P<v>[^\s\"'`]+)"
)


def _value_is_secret(kind: str, raw: str) -> bool:
    quoted = raw[:1] in "\"'`" and len(raw) >= 2
    value = raw[1:-1] if quoted else raw.rstrip(".,;:!?)]}")
    if not value or _PLACEHOLDER.match(value):
        return False
    if kind == "pin":
        return bool(_PIN_VALUE.fullmatch(value) or _CODE_VALUE.fullmatch(value))
    if kind == "tok":
        has_digit = any(c.isdigit() for c in value)
        has_alpha = any(c.isalpha() for c in value)
        if value.lower() in _NOT_A_VALUE or (_HEX_OR_UUID.fullmatch(value) and len(value) < 16):
            return False
        return (
            _looks_random(value)
            or (len(value) >= 8 and has_digit and has_alpha)
            or (quoted and len(value) >= 8)
        )
    # password-like: any word that is not part of a sentence about the password
    if quoted:
        return len(value) >= 3
    low = value.lower()
    if len(value) < 3 or low in _NOT_A_VALUE:
        return False
    # "expired", "missing", "securely": describing the password, not disclosing it
    return not (value.isalpha() and re.search(r"(?:ed|ing|ly)$", low))


# A long random token close to a credential word ("key", "token", "secret" ...).
_CRED_CONTEXT: Final = re.compile(
    r"(?i)(?:api|key|token|secret|passw|credential|auth|bearer|private|access)"
)
_LONG_TOKEN: Final = re.compile(
    r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{24,200}(?![A-Za-z0-9_+/=-])"
)
_AWS_SECRET: Final = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])")


def detect_credential(p: Prepared) -> Finding | None:
    text = p.text
    for pattern, what, needs_random in _KEY_FORMATS:
        for m in pattern.finditer(text):
            if not needs_random or _looks_random(m.group(0).split("-", 1)[-1]):
                return Finding("credential", f"looks like {what}")
    for m in _CONN_STRING.finditer(text):
        if not _PLACEHOLDER.match(m.group("pw")):
            return Finding("credential", "a connection string with an embedded password")
    for m in _BEARER.finditer(text):
        if _looks_random(m.group("v")):
            return Finding("credential", "a bearer token")
    if _BASIC_AUTH.search(text):
        return Finding("credential", "HTTP basic-auth credentials")
    for m in _SECRET_PHRASE.finditer(text):
        kind = "pw" if m.group("pw") else "pin" if m.group("pin") else "tok"
        if _value_is_secret(kind, m.group("v")):
            noun = {"pw": "a password", "pin": "a PIN or access code", "tok": "a key or token"}
            return Finding("credential", f"states {noun[kind]} with its value")
    for m in _WITH_PASSWORD.finditer(text):
        kind = "pin" if m.group("pw").lower() == "pin" else "pw"
        if _value_is_secret(kind, m.group("v")):
            return Finding("credential", "states a password with its value")
    for m in _LOGIN_PAIR.finditer(text):
        value = m.group("v")
        if _value_is_secret("pw", value) and not value.isalpha():
            return Finding("credential", "states a login together with its password")
    lowered = text.lower()
    for m in _AWS_SECRET.finditer(text):
        before = lowered[max(0, m.start() - 60) : m.start()]
        if ("aws" in before or "secret" in before) and _looks_random(m.group(0)):
            return Finding("credential", "looks like an AWS secret access key")
    for m in _LONG_TOKEN.finditer(text):
        token = m.group(0)
        if _HEX_OR_UUID.fullmatch(token) or not _looks_random(token):
            continue  # commit SHAs, checksums and UUIDs are identifiers, not secrets
        if _CRED_CONTEXT.search(text, max(0, m.start() - 40), m.start()):
            return Finding("credential", "a high-entropy token next to a credential word")
    return None


# ---------------------------------------------------------------------------------------------
# Payment cards
# ---------------------------------------------------------------------------------------------

# 13-19 digits, single spaces or dashes allowed between them, not part of a longer digit run.
_CARD_CANDIDATE: Final = re.compile(
    r"(?<![0-9+])(?<![0-9][ -])[0-9](?:[ -]?[0-9]){12,18}(?![ -]?[0-9])"
)
_CARD_CONTEXT: Final = re.compile(
    r"(?i)\b(?:card|visa|master\s?card|amex|american\s+express|discover|diners|jcb|unionpay"
    r"|maestro|credit|debit|cc|pan|payment|pay\s+with|billing)\b"
)
_CVV: Final = re.compile(
    r"(?i)\b(?:cvv2?|cvc2?|cvn|card\s+(?:security|verification)\s+(?:code|value|number))\b"
    r"\W{0,3}(?:(?:is|code|number)\s+)?[:=#]?\s*\d{3,4}\b"
)
_CARD_ONLY_CODE: Final = re.compile(
    r"(?i)\b(?:cid|csc|security\s+code)\b\W{0,3}(?:is\s+)?[:=#]?\s*\d{3,4}\b"
)
_EXPIRY: Final = re.compile(
    r"(?i)\b(?:exp(?:iry|iration|\.)?(?:\s+date)?|expires?(?:\s+(?:on|in))?|valid\s+(?:thru|through|until)"
    r"|good\s+thru)\W{0,3}(?:is\s+)?(?:0?[1-9]|1[0-2])\s*[/-]\s*(?:\d{2}|20\d{2})\b"
)


def _plausible_iin(d: str) -> bool:
    """Does the issuer prefix belong to a card network that issues numbers of this length?"""
    n, p2, p3, p4, p6 = len(d), int(d[:2]), int(d[:3]), int(d[:4]), int(d[:6])
    if d[0] == "4":  # Visa
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:  # Mastercard
        return n == 16
    if 2200 <= p4 <= 2204:  # Mir
        return 16 <= n <= 19
    if p2 in (34, 37):  # American Express
        return n == 15
    if p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925:  # Discover
        return 16 <= n <= 19
    if 3528 <= p4 <= 3589:  # JCB
        return 16 <= n <= 19
    if p2 == 62 or p2 == 81:  # UnionPay
        return 16 <= n <= 19
    if 300 <= p3 <= 305 or p2 in (36, 38, 39) or p4 == 3095:  # Diners Club
        return 14 <= n <= 19
    if p2 == 50 or 56 <= p2 <= 69:  # Maestro
        return 12 <= n <= 19
    return False


def _card_grouping_ok(candidate: str) -> bool:
    """Cards are written unbroken, in fours, or Amex/Diners style 4-6-5 / 4-6-4."""
    groups = [len(g) for g in re.split(r"[ -]", candidate)]
    if len(groups) == 1:
        return True
    if groups in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4


def detect_payment_card(p: Prepared) -> Finding | None:
    text = p.text
    context = _CARD_CONTEXT.search(text) is not None
    for m in _CARD_CANDIDATE.finditer(text):
        candidate = m.group(0)
        digits = re.sub(r"[ -]", "", candidate)
        if not (13 <= len(digits) <= 19) or len(set(digits)) == 1:
            continue
        if not _card_grouping_ok(candidate) or not _plausible_iin(digits) or not luhn_valid(digits):
            continue
        # 15/16 digits are the card lengths in use; other lengths need a word like "card" nearby,
        # because 13-digit EAN barcodes and long reference numbers pass Luhn one time in ten.
        if len(digits) in (15, 16) or context or " " in candidate or "-" in candidate:
            return Finding("payment_card", "a payment card number (passes the Luhn check)")
    if _CVV.search(text):
        return Finding("payment_card", "a card security code (CVV/CVC)")
    if context and _CARD_ONLY_CODE.search(text):
        return Finding("payment_card", "a card security code")
    if context and _EXPIRY.search(text):
        return Finding("payment_card", "a card expiry date")
    return None


# ---------------------------------------------------------------------------------------------
# Bank accounts
# ---------------------------------------------------------------------------------------------

_IBAN_CANDIDATE: Final = re.compile(r"\b[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){11,34}")
_ACCOUNT_NUMBER: Final = re.compile(
    r"(?i)\b(?:(?:bank|checking|savings|current|chequing|deposit)\s+)?(?:account|acct|a/c)\.?\s*"
    r"(?:number|num|no\.?|nr\.?|#)\s*(?:is|was|:|=|-)?\s*#?\s*(?P<v>\d(?:[ -]?\d){5,19})\b"
)
_BANK_ACCOUNT_IS: Final = re.compile(
    r"(?i)\b(?:bank|checking|savings|chequing)\s+account\s*(?:is|:|=)?\s*#?\s*"
    r"(?P<v>\d(?:[ -]?\d){5,19})\b"
)
_ROUTING: Final = re.compile(
    r"(?i)\b(?:routing|aba|transit|rtn)\s*(?:number|num|no\.?|#)?\s*(?:is|:|=)?\s*"
    r"(?P<v>\d{9}|\d{4}-\d{4}-\d)\b"
)
_SORT_CODE: Final = re.compile(r"(?i)\bsort\s*code\s*(?:is|:|=)?\s*\d{2}[- ]?\d{2}[- ]?\d{2}\b")
_BSB: Final = re.compile(r"\bBSB\s*(?:number|no\.?|#)?\s*(?:is|:|=)?\s*\d{3}[- ]?\d{3}\b")
_IFSC: Final = re.compile(r"(?i)\bifsc(?:\s+code)?\s*(?:is|:|=)?\s*[A-Z]{4}0[A-Z0-9]{6}\b")


def detect_bank_account(p: Prepared) -> Finding | None:
    text = p.text
    for m in _IBAN_CANDIDATE.finditer(text):
        compact = m.group(0).replace(" ", "").upper()
        length = _IBAN_LENGTHS.get(compact[:2])
        if length is None or len(compact) < length:
            continue
        iban = compact[:length]
        bban = iban[4:]
        # Every national format is mostly digits; prose that happens to start "at12" is not.
        if sum(c.isdigit() for c in bban) * 2 >= len(bban) and iban_valid(iban):
            return Finding("bank_account", "an IBAN (valid checksum)")
    if _ACCOUNT_NUMBER.search(text) or _BANK_ACCOUNT_IS.search(text):
        return Finding("bank_account", "a bank account number")
    if _ROUTING.search(text):
        return Finding("bank_account", "a bank routing number")
    if _SORT_CODE.search(text) or _BSB.search(text) or _IFSC.search(text):
        return Finding("bank_account", "a bank sort code or branch code")
    return None


# ---------------------------------------------------------------------------------------------
# Government ids
# ---------------------------------------------------------------------------------------------

# Area 000, 666 and 900-999, group 00 and serial 0000 are never issued.
_SSN: Final = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_SSN_CONTEXT: Final = re.compile(
    r"(?i)\b(?:ssn|ss#|social\s+security(?:\s+(?:number|no\.?|#))?)\W{0,4}(?:(?:is|was)\s+)?"
    r"\d{3}[ -]?\d{2}[ -]?\d{4}\b"
)
# UK National Insurance number; prefixes that are never issued are excluded. Case-sensitive on
# purpose: NI numbers are printed in capitals, and lower-case matches are mostly words+numbers.
_NINO: Final = re.compile(
    r"\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
)
# In context any NI-shaped value counts, including HMRC's specimen prefixes ("QQ 12 34 56 C").
_NINO_CONTEXT: Final = re.compile(
    r"(?i)\b(?:national\s+insurance|ni|nino)(?:\s+(?:number|no\.?|#))?\s*(?:is|:|=)?\s*"
    r"[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
)
# An id value: tokens that each contain a digit, e.g. "C01X00T47", "123 456 789", "A123-4567".
_ID_VALUE: Final = r"(?P<v>[A-Za-z0-9]*\d[A-Za-z0-9]*(?:[ ./-][A-Za-z0-9]*\d[A-Za-z0-9]*){0,4})"
_ID_LEAD: Final = r"(?:\s*(?:number|num|no\.?|nr\.?|#|id|code))?\s*(?:(?:is|was|:|=|-|#)\s*)?"
_ID_CONTEXT_CI: Final = re.compile(
    r"(?i)\b(?:passport|driver'?s?\s+licen[cs]e|driving\s+licen[cs]e|national\s+(?:id|identity"
    r"|insurance)(?:\s+card)?|identity\s+card|id\s+card|personalausweis|steuer-?id"
    r"|steueridentifikationsnummer|tax\s+(?:id|identification|file)|social\s+insurance"
    r"|aadhaa?r|nhs|medicare|health\s+insurance|burgerservicenummer|codice\s+fiscale"
    r"|personnummer|pesel|resident\s+registration|green\s+card|alien\s+registration|voter\s+id"
    r"|sozialversicherungsnummer|permanent\s+account\s+number)" + _ID_LEAD + _ID_VALUE
)
# Abbreviations that are ordinary words in lower case ("sin", "pan", "tin") only count in capitals.
_ID_CONTEXT_CS: Final = re.compile(
    r"\b(?:SIN|TIN|ITIN|TFN|DL|BSN|DNI|NIE|NIF|CPF|CURP|RFC|NRIC|PAN|CPR|NINO|PPSN|EIN|SVNR|AHV)"
    + _ID_LEAD
    + _ID_VALUE
)


def _id_value_ok(value: str) -> bool:
    compact = re.sub(r"[ ./-]", "", value)
    digits = sum(c.isdigit() for c in compact)
    # Years ("expires 2027") and short counts are not ids; ids are 6+ characters, mostly digits
    # or mixed ("C01X00T47").
    return 6 <= len(compact) <= 20 and digits >= 4 and not re.fullmatch(r"(?:19|20)\d\d", compact)


def detect_government_id(p: Prepared) -> Finding | None:
    text = p.text
    if _SSN.search(text) or _SSN_CONTEXT.search(text):
        return Finding("government_id", "a US social security number")
    if _NINO.search(text) or _NINO_CONTEXT.search(text):
        return Finding("government_id", "a UK national insurance number")
    for pattern in (_ID_CONTEXT_CI, _ID_CONTEXT_CS):
        for m in pattern.finditer(text):
            if _id_value_ok(m.group("v")):
                return Finding("government_id", "a government-issued id number")
    return None


# ---------------------------------------------------------------------------------------------
# Vocabulary for the language detectors (lower case)
# ---------------------------------------------------------------------------------------------

# People close to the user; health or beliefs of a third person are just as sensitive. Pets and
# organisations are not in the list, so "my dog has diabetes" passes.
_PERSON: Final = (
    r"(?:(?:older|younger|little|big|baby|eldest|oldest|youngest|twin|late|\d+[\s-]year[\s-]old)\s+)?"
    r"(?:wife|husband|partner|spouse|son|daughter|child|kid|toddler|mom|mum|mother|dad|father"
    r"|parents?|brother|sister|sibling|grandma|grandmother|granny|grandpa|grandfather|aunt|uncle"
    r"|cousin|niece|nephew|boyfriend|girlfriend|fianc[eé]e?|friend|best\s+friend|roommate"
    r"|flatmate|housemate|colleague|co-?worker|boss|manager|neighbou?r|step(?:son|daughter|mom"
    r"|dad|mother|father)|(?:mother|father|sister|brother)-in-law|ex|ex-wife|ex-husband"
    r"|teammate|employee|patient|client|student)"
)
# Subjects for "<subject> has/is <term>": the user ("i", "the user", a bare memory statement such as
# "Has type 2 diabetes"), or a person close to them.
_START: Final = r"(?:^|(?<=[.;:!?]\s)|(?<=[.;:!?]))\s*"
_ADVERBS: Final = (
    r"(?:(?:also|still|now|currently|actually|really|so|very|pretty|quite|severely|mildly"
    r"|clinically|chronically|recently|newly|openly|proudly|not|technically|legally|partially"
    r"|completely|totally|officially|finally|just|definitely|probably|kind\s+of|sort\s+of"
    r"|borderline|a\s+bit|somewhat|slightly|always|never|sadly|unfortunately"
    r"|\d+\s+(?:weeks?|months?))\s+){0,3}"
)
_BE: Final = (
    r"(?:\bi\s+(?:(?:might|may|could|must|will|would|also|still|think\s+i|guess\s+i|believe\s+i"
    r"|have|had|always|never|recently|just|now)\s+){0,3}(?:am|be|was|been|became|got|identify\s+as)"
    r"|(?:\bthe\s+)?\buser\s+(?:is|was|has\s+been|became|identifies\s+as)"
    r"|\bmy\s+" + _PERSON + r"\s+(?:is|was|has\s+been|became|got|identifies\s+as)"
    r"|\b(?:he|she)\s+(?:is|was|has\s+been|identifies\s+as)"
    r"|\b(?:we|(?:my\s+)?\w+\s+and\s+i)\s+are(?:\s+both)?"
    r"|" + _START + r"(?:is|was|identifies\s+as))\s+" + _ADVERBS
)
_HAVE_VERB: Final = (
    r"(?:have|has|had|got|get|gets|suffer(?:s|ed)?\s+from|(?:am|is|was|been)\s+suffering\s+from"
    r"|live[sd]?\s+with|(?:am|is|been)\s+living\s+with|struggl(?:e|es|ed)\s+with"
    r"|(?:am|is|was|been)\s+struggling\s+with|battl(?:e|es|ed)|(?:am|is|been)\s+battling"
    r"|(?:was|were|got|been|am|is)\s+(?:\w+\s+)?diagnosed\s+with|diagnosed\s+with"
    r"|(?:am|is|was|been)\s+(?:being\s+)?treated\s+for|(?:am|is|was|been)\s+recovering\s+from"
    r"|recovered\s+from|survived|beat|developed|caught|tested\s+positive\s+for|contracted"
    r"|deal(?:s|t)?\s+with|(?:am|is|been)\s+dealing\s+with|(?:am|is)\s+in\s+remission\s+from)"
)
_HAVE: Final = (
    r"(?:(?:\bi|(?:\bthe\s+)?\buser|\bmy\s+" + _PERSON + r"|\b(?:he|she))\s+|" + _START + r")"
    r"(?:(?:also|still|now|recently|just|actually|really|probably|might|may|could|definitely"
    r"|think\s+i|was|have|has|had|been|finally|officially|sadly|unfortunately|always|never|already"
    r"|currently|apparently|often|sometimes|regularly|occasionally)\s+){0,3}" + _HAVE_VERB + r"\s+"
)
_DET: Final = (
    r"(?:(?:a|an|the|some|first|second|another|recurring|frequent|occasional|constant|mild|severe"
    r"|chronic|early|late|terminal|bad|clinical|major|serious|acute|moderate|high-functioning"
    r"|diagnosed|stage\s+\w+|my|\d+|two|three|four|several|a\s+few|multiple|many|more)\s+){0,3}"
)
_CONDITION: Final = (
    r"(?:(?:type\s*(?:1|2|i|ii|one|two)\s+|pre-?|gestational\s+)?diabetes"
    r"|(?:breast|lung|prostate|colon|colorectal|skin|bowel|ovarian|cervical|pancreatic|brain|bone"
    r"|blood|testicular|thyroid|liver|kidney|stomach|throat|stage\s+\w+\s+)?\s?cancer"
    r"|leuka?emia|lymphoma|melanoma|tumou?rs?|hiv|aids|hepatitis(?:\s+[abc])?|tuberculosis|asthma"
    r"|copd|epilepsy|seizures|adhd|autism|asperger'?s|ocd|c?-?ptsd|bipolar(?:\s+disorder)?"
    r"|(?:postpartum\s+|postnatal\s+)?depression|anxiety(?:\s+disorder)?|panic\s+(?:attacks?"
    r"|disorder)|schizophrenia|psychosis|(?:an\s+)?eating\s+disorder|anorexia|bulimia"
    r"|binge[\s-]eating(?:\s+disorder)?|insomnia|narcolepsy|sleep\s+apno?ea|migraines?"
    r"|chronic\s+(?:pain|fatigue|illness|condition|disease)|fibromyalgia"
    r"|(?:rheumatoid\s+|psoriatic\s+|osteo)?arthritis|lupus|multiple\s+sclerosis|parkinson'?s"
    r"|alzheimer'?s|dementia|crohn'?s(?:\s+disease)?|ibs|(?:ulcerative\s+)?colitis"
    r"|c[eo]?eliac(?:\s+disease)?|hypertension|high\s+blood\s+pressure|high\s+cholesterol"
    r"|heart\s+(?:disease|failure|condition|problems)|arrhythmia|atrial\s+fibrillation|afib"
    r"|a\s+pacemaker|heart\s+attack|stroke(?!\s+of)|covid(?:-19)?|long\s+covid|the\s+flu"
    r"|stds?|stis?|chlamydia|gonorrh?o?ea|syphilis|herpes|hpv|(?:hypo|hyper)thyroidism"
    r"|thyroid\s+(?:disease|condition|problems)|hashimoto'?s|graves'?\s+disease|endometriosis"
    r"|pcos|infertility|erectile\s+dysfunction|(?:learning\s+)?disabilit(?:y|ies)|dyslexia"
    r"|dyspraxia|dyscalculia|tourette'?s|tinnitus|glaucoma|cataracts|macular\s+degeneration"
    r"|kidney\s+(?:disease|failure|stones)|liver\s+disease|cirrhosis|cystic\s+fibrosis"
    r"|sickle\s+cell(?:\s+(?:anaemia|anemia|disease))?|ha?emophilia|(?:\w+\s+)?allerg(?:y|ies)"
    r"|addiction|alcoholism|(?:an\s+)?(?:alcohol|drinking|drug|substance\s+abuse)\s+problem"
    r"|(?:a\s+)?mental\s+(?:illness|health\s+(?:issues|problems|condition))|concussion"
    r"|broken\s+(?:arm|leg|wrist|ankle|foot|hand|rib|ribs|nose|collarbone|hip)"
    r"|torn\s+(?:acl|meniscus|ligament|rotator\s+cuff)|scoliosis|osteoporosis|gout|psoriasis"
    r"|eczema|shingles|pneumonia|bronchitis|ana?emia|vertigo|hearing\s+loss|hearing\s+aids?"
    r"|colou?r[\s-]?blindness|terminal\s+illness|down\s+syndrome|cerebral\s+palsy|spina\s+bifida"
    r"|huntington'?s|gender\s+dysphoria|an\s+ostomy|a\s+stoma|a\s+prosthetic\s+\w+|a\s+disability"
    r"|a\s+(?:heart|lung|kidney|liver)\s+transplant|(?:a\s+)?miscarriage|diabetic\s+neuropathy"
    r"|neuropathy|sepsis|measles|mumps|malaria|ebola|mpox|monkeypox|obesity|an?\s+illness"
    r"|(?:\w+\s+)?surgery)"
)
_HEALTH_ADJ: Final = (
    r"(?:(?:a\s+)?(?:type\s*(?:1|2|one|two)\s+)?(?:pre-?)?diabetic|(?:an\s+)?epileptic"
    r"|(?:an\s+)?asthmatic|bipolar|depressed|suicidal|anorexic|bulimic|schizophrenic|autistic"
    r"|on\s+the\s+(?:autism\s+|autistic\s+)?spectrum|neurodivergent|dyslexic|dyspraxic|adhd"
    r"|hiv[\s-]?positive|hiv\s?\+|pregnant|expecting\s+(?:a\s+baby|a\s+child|twins|our\s+first"
    r"|my\s+first)|trying\s+to\s+(?:get\s+pregnant|conceive|have\s+a\s+baby)|infertile"
    r"|immunocompromised|immunosuppressed|deaf|hard\s+of\s+hearing|blind(?!-|\s+spot)"
    r"|partially\s+sighted|visually\s+impaired|hearing\s+impaired|colou?r[\s-]?blind"
    r"|in\s+a\s+wheelchair|wheelchair[\s-]bound|a\s+wheelchair\s+user|paraly[sz]ed|an\s+amputee"
    r"|(?:a\s+)?cancer\s+survivor|in\s+remission|(?:in|on|undergoing)\s+chemo(?:therapy)?"
    r"|on\s+dialysis|in\s+rehab|in\s+recovery(?!\s+mode)|sober|(?:an?\s+)?(?:recovering\s+)?"
    r"(?:alcoholic|(?:drug\s+)?addict)|lactose[\s-]intolerant|gluten[\s-]intolerant"
    r"|allergic\s+to(?!\s+(?:nothing|anything))|c[eo]?eliac|ana?emic|hypertensive|terminally\s+ill|chronically\s+ill"
    r"|mentally\s+ill|in\s+therapy|obese|postpartum|breastfeeding|menopausal|perimenopausal"
    r"|going\s+through\s+(?:menopause|chemo|ivf|rehab)|hiv\s+negative"
    r"|(?:clean|sober)\s+(?:from|off)\s+(?:opioids|drugs|heroin|cocaine|meth|alcohol|booze|pills"
    r"|painkillers|fentanyl|crack))"
)
_MEDICATION: Final = (
    r"(?:sertraline|zoloft|fluoxetine|prozac|citalopram|celexa|escitalopram|lexapro|paroxetine"
    r"|paxil|venlafaxine|effexor|duloxetine|cymbalta|bupropion|wellbutrin|mirtazapine|trazodone"
    r"|amitriptyline|lithium|lamotrigine|lamictal|valproate|depakote|quetiapine|seroquel"
    r"|olanzapine|zyprexa|risperidone|risperdal|aripiprazole|abilify|clozapine|haloperidol"
    r"|adderall|ritalin|methylphenidate|concerta|vyvanse|lisdexamfetamine|strattera|atomoxetine"
    r"|modafinil|xanax|alprazolam|valium|diazepam|klonopin|clonazepam|ativan|lorazepam|ambien"
    r"|zolpidem|metformin|insulin|ozempic|wegovy|semaglutide|mounjaro|tirzepatide|jardiance"
    r"|levothyroxine|synthroid|lisinopril|amlodipine|losartan|metoprolol|atorvastatin|lipitor"
    r"|statins?|simvastatin|warfarin|eliquis|xarelto|clopidogrel|prednisone|prednisolone"
    r"|methotrexate|humira|adalimumab|enbrel|chemo(?:therapy)?|tamoxifen|letrozole"
    r"|antiretrovirals|truvada|biktarvy|hrt|hormone\s+(?:replacement\s+)?therapy|estrogen"
    r"|oestrogen|testosterone|puberty\s+blockers|birth\s+control|the\s+pill|contraceptives?"
    r"|antidepressants?|antipsychotics?|anti-?anxiety\s+(?:meds|medication|pills)"
    r"|mood\s+stabili[sz]ers?|benzodiazepines|benzos|opioids|oxycodone|oxycontin|hydrocodone"
    r"|vicodin|percocet|tramadol|morphine|fentanyl|methadone|suboxone|buprenorphine|naltrexone"
    r"|antabuse|disulfiram|gabapentin|pregabalin|lyrica|sumatriptan|propranolol|epi-?pens?"
    r"|inhalers?|albuterol|ventolin|steroids|accutane|isotretinoin|spironolactone|finasteride"
    r"|viagra|sildenafil|cialis|wheelchair|walking\s+(?:cane|frame)|walker|hearing\s+aids?"
    r"|cpap(?:\s+machine)?|insulin\s+pump|feeding\s+tube|oxygen\s+(?:tank|concentrator)|(?:blood\s+pressure|thyroid|cholesterol|heart|diabetes|anxiety"
    r"|depression|adhd|seizure|epilepsy|psychiatric|hiv)\s+(?:meds|medications?|medicine|pills"
    r"|tablets|drugs)|meds\s+for\s+\w+|medication\s+for\s+\w+)"
)
# Words right after a sensitive term that turn it into a topic ("diabetes research", "lithium
# batteries", "flu shot") rather than a condition of the speaker.
_TOPIC_AFTER: Final = (
    r"(?![\s-]*(?:research\w*|related|friendly|free|safe|specific|focused|themed|awareness|polic(?:y|ies)|charit(?:y|ies)|foundation|fundrais\w*"
    r"|drugs?|products?|stocks?|shares|apps?|data(?:set)?|stud(?:y|ies)|articles?|papers?|books?"
    r"|course\w*|class(?:es)?|lectures?|documentar(?:y|ies)|podcasts?|projects?|market\w*"
    r"|industr(?:y|ies)|sector|conferences?|meetups?|team|startup|compan(?:y|ies)|campaigns?"
    r"|walk|marathon|ion|batter(?:y|ies)|mines?|mining|prices?|vaccines?|vaccinations?|shots?"
    r"|jabs?|season|outbreak|pandemic|statistics|stats|rates?|patients|clinic|ward|module"
    r"|simulation|model|jokes?|memes?|episode|character|trials?|sales|pump\s+company|scenes?"
    r"|test\s+(?:cases?|suite)|lab|labs|unit|department|guidelines|scripts?|technique|width"
    r"|colou?r|style)\b)"
)
# A term ends a clause here: used for words that are also ordinary adjectives ("straight out of
# college", "conservative with estimates", "ace at chess").
_CLAUSE_END: Final = (
    r"(?=\s*(?:$|[.,;:!?)\]]|and\b|but\b|so\b|too\b|myself\b|btw\b|now\b|man\b|woman\b|men\b"
    r"|women\b|guy\b|girl\b|person\b|people\b|voter\b|supporter\b|member\b|and\s+proud\b"
    r"|american\b|british\b|canadian\b|australian\b|by\s+birth\b|though\b|here\b|as\s+well\b"
    r"|politically\b))"
)

_ORIENTATION: Final = (
    r"(?:(?:an?\s+)?(?:gay|lesbian|bisexual|pansexual|asexual|aromantic|queer|homosexual|heterosexual"
    r"|transgender|non-?binary|genderqueer|gender-?fluid|intersex|two-spirit|polyamorous"
    r"|a\s+trans\s+(?:man|woman|person)|(?:a\s+)?(?:gay|bi|lesbian|queer)\s+(?:man|woman|guy"
    r"|girl|person))(?![\w-])|(?:trans|bi|pan|ace|straight)" + _CLAUSE_END + r")"
)
_RELIGION: Final = (
    r"(?:(?:an?\s+)?(?:(?:devout|practi[cs]ing|observant|born-again|lapsed|non-practi[cs]ing"
    r"|converted|orthodox|reform|sunni|shia|shi'a|roman|ultra-orthodox|hasidic|evangelical"
    r"|conservative|proud|committed)\s+){0,2}(?:muslim|christian|catholic|protestant|jew|jewish"
    r"|hindu|buddhist|sikh|mormon|lds|jehovah'?s\s+witness|atheist|agnostic|evangelical|baptist"
    r"|methodist|lutheran|anglican|episcopalian|presbyterian|pentecostal|quaker|adventist"
    r"|pagan|wiccan|jain|bah[aá]'?[ií]|zoroastrian|rastafarian|taoist|shintoist|unitarian"
    r"|scientologist|christ[\s-]follower|follower\s+of\s+(?:christ|jesus|islam))"
    r"(?!-|\s+(?:about|when|regarding|in\s+my\s+approach|bale|dior|school\w*|educated|university"
    r"|college)\b|\s+\w+'s\b)\b"
    r"|(?:not\s+)?(?:very\s+)?religious(?!\s+(?:about|when|with))\b"
    r"|(?:a\s+)?believer\b(?!\s+in\b)"
    r"|spiritual\s+but\s+not\s+religious)"
)
_POLITICS: Final = (
    r"(?:(?:an?\s+)?(?:(?:registered|lifelong|proud|staunch|committed|card-carrying|die-?hard"
    r"|loyal)\s+)?(?:republican|democrat|tory|socialist|democratic\s+socialist|communist|marxist"
    r"|libertarian|anarchist|leftist|fascist|neo-?nazi|white\s+nationalist|maga(?:\s+supporter)?"
    r"|(?:trump|biden|harris|obama|sanders|corbyn|starmer|farage|modi)\s+supporter"
    r"|(?:labour|tory|conservative|lib\s+dem|liberal\s+democrat|green|reform|snp|spd|cdu|afd|fdp"
    r"|republican|democratic|democrat)\s+(?:party\s+)?(?:voter|supporter|member|activist))\b"
    r"|(?:an?\s+)?(?:(?:registered|lifelong|proud|staunch|committed|die-?hard)\s+)?"
    r"(?:conservative|liberal|progressive|left-?wing|right-?wing|centrist"
    r"|left-?leaning|right-?leaning|nationalist|populist)" + _CLAUSE_END + r")"
)
_ETHNICITY: Final = (
    r"(?:(?:an?\s+)?(?:proud\s+|mixed\s+|half\s+)?(?:hispanic|latin[oaex]|african[\s-]american"
    r"|asian[\s-]american|native\s+american|indigenous|first\s+nations|aboriginal|torres\s+strait"
    r"\s+islander|pacific\s+islander|native\s+hawaiian|alaska\s+native|arab(?:[\s-]american)?"
    r"|romani|mixed[\s-]race|biracial|multiracial|(?:a\s+)?person\s+of\s+colou?r|poc|bipoc"
    r"|caucasian|kurdish|uyghur|berber|amazigh|yazidi|rohingya)\b"
    r"|(?:an?\s+)?(?:black|white|asian|brown|roma|desi|mestizo)" + _CLAUSE_END + r")"
)

# ---------------------------------------------------------------------------------------------
# Health
# ---------------------------------------------------------------------------------------------

_SUBJECT_ANY: Final = (
    r"(?:(?:\bi|(?:\bthe\s+)?\buser|\bmy\s+" + _PERSON + r"|\b(?:he|she))\s+|" + _START + r")"
)
_HEALTH_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(_HAVE + _DET + _CONDITION + r"(?!\w)" + _TOPIC_AFTER), "a health condition"),
    (re.compile(_BE + _HEALTH_ADJ + r"(?!\w)" + _TOPIC_AFTER), "a health condition"),
    (
        re.compile(
            _SUBJECT_ANY + _ADVERBS + r"(?:(?:am|is|was|have\s+been|has\s+been|been)\s+)?"
            r"(?:take|takes|took|taking|on|use|uses|using|prescribed|started|starting|stopped"
            r"|quit|inject|injects|injecting|switched\s+to|switching\s+to|weaning\s+off|coming"
            r"\s+off|came\s+off|need|needs|got\s+prescribed)\s+(?:(?:a|an|the|my|some|daily|low"
            r"|high|dose|doses|of|\d+\s*mg|mg|again|also|now|back|on)\s+){0,4}"
            + _MEDICATION
            + r"(?!\w)"
            + _TOPIC_AFTER
        ),
        "medication",
    ),
    (
        re.compile(
            r"\b(?:prescribed|(?:put|started|switched)\s+(?:me|him|her|them)\s+on)\s+(?:me\s+)?"
            + _MEDICATION
            + r"(?!\w)"
            + _TOPIC_AFTER
        ),
        "medication",
    ),
    (
        re.compile(
            r"\b(?:i|user|my\s+" + _PERSON + r"|he|she)\s+(?:\w+\s+){0,2}?(?:was|were|been|got"
            r"|am|is)\s+(?:\w+\s+)?diagnosed\b|\bdiagnosed\s+(?:me|him|her|my\s+" + _PERSON + r")\b"
        ),
        "a medical diagnosis",
    ),
    (
        re.compile(
            r"\bmy\s+(?:"
            + _PERSON
            + r"'s\s+)?(?:"
            + _CONDITION
            + r"|"
            + _MEDICATION
            + r"|therapist|psychiatrist|psychologist|oncologist|cardiologist|endocrinologist"
            r"|neurologist|rheumatologist|gyn(?:a|ae)?ecologist|ob-?gyn|urologist|hepatologist"
            r"|nephrologist|fertility\s+(?:doctor|clinic|treatment)|diagnosis|prognosis|symptoms"
            r"|medical\s+(?:condition|history|records?)|health\s+(?:condition|issues|problems)"
            r"|mental\s+health|blood\s+(?:type|sugar|glucose|pressure|test\s+results|work)|a1c"
            r"|hba1c|glucose\s+levels?|cholesterol|viral\s+load|cd4(?:\s+count)?|t[\s-]cell\s+count"
            r"|bmi|hiv\s+status|pregnancy|abortion|surgery|rehab|relapse|sobriety|disability"
            r"|(?:insulin|infusion)\s+pump|cgm|glucose\s+monitor|wheelchair|cpap(?:\s+machine)?"
            r"|meds|medications?|prescriptions?(?!\s+(?:glasses|sunglasses|lenses))|chemo"
            r"|ivf|sponsor\s+(?:at|in)\s+(?:aa|na))\b" + _TOPIC_AFTER
        ),
        "health information",
    ),
    (
        re.compile(
            r"\b(?:i|we|my\s+" + _PERSON + r")\s+(?:\w+\s+){0,2}?(?:had|have|am\s+having|having"
            r"|am\s+scheduled\s+for|got|underwent|need|needs|am\s+getting|getting|will\s+have"
            r"|am\s+going\s+through|are\s+going\s+through|are\s+doing|started)\s+(?:an?\s+|my\s+"
            r"|the\s+|a\s+round\s+of\s+)?(?:\w+\s+)?(?:surgery|mastectomy|lumpectomy|hysterectomy"
            r"|vasectomy|abortion|miscarriage|c-section|caesarean|chemo(?:therapy)?|radiation"
            r"\s+therapy|radiotherapy|transplant|biopsy|colonoscopy|mammogram|dialysis|ivf"
            r"|egg\s+retrieval|top\s+surgery|bottom\s+surgery|stillbirth|gastric\s+bypass)\b"
        ),
        "a medical procedure",
    ),
    (
        re.compile(
            r"\b(?:i|my\s+" + _PERSON + r")\s+(?:\w+\s+){0,2}?(?:see|sees|saw|am\s+seeing"
            r"|is\s+seeing|been\s+seeing|started\s+seeing|go\s+to|goes\s+to|went\s+to|attend"
            r"|attends|started|am\s+in|is\s+in)\s+(?:an?\s+|my\s+|the\s+)?(?:therapist|therapy"
            r"|psychiatrist|psychologist|counsell?ing|rehab|aa|na|aa\s+meetings|na\s+meetings"
            r"|alcoholics\s+anonymous|narcotics\s+anonymous|group\s+therapy|cbt|dbt|emdr"
            r"|couples\s+therapy|a\s+support\s+group\s+for\s+\w+)\b"
        ),
        "mental-health treatment",
    ),
    # "disabled" alone is also an account state ("the user is disabled"), so only a person counts.
    (
        re.compile(
            r"\b(?:i\s+am|my\s+" + _PERSON + r"\s+is)\s+(?:\w+\s+)?disabled\b(?!\s+(?:in|on|for"
            r"|by|from|until|after)\b)|\b(?:i\s+am|as)\s+an?\s+disabled\s+(?:person|veteran|woman"
            r"|man|parent|adult|student)\b"
        ),
        "a disability",
    ),
    (
        re.compile(
            r"\bwe\s+are\s+(?:\w+\s+)?(?:pregnant|expecting(?=\s*(?:$|[.,;!?]|a\s+baby|twins"
            r"|our\s+first|a\s+(?:boy|girl)|in\b|next\b|this\b))|trying\s+to\s+conceive)"
        ),
        "pregnancy",
    ),
)


# "MS" is multiple sclerosis only in capitals and not before a product name ("MS Office").
_MS: Final = re.compile(
    r"\b(?:[Ii]\s+(?:have|had)|[Ii]'ve\s+got|(?:[Hh]e|[Ss]he|[Uu]ser)\s+has|[Mm]y\s+\w+\s+has"
    r"|diagnosed\s+with)\s+MS\b(?![\s-]+(?:[A-Z]\w*|dos\b))"
)


def detect_health(p: Prepared) -> Finding | None:
    for pattern, what in _HEALTH_RULES:
        if pattern.search(p.sem):
            return Finding("health", f"a personal statement about {what}")
    if _MS.search(p.text):
        return Finding("health", "a personal statement about a health condition")
    return None


# ---------------------------------------------------------------------------------------------
# Other special categories (GDPR art. 9 and art. 10)
# ---------------------------------------------------------------------------------------------

_SENSITIVE_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(_BE + _ORIENTATION), "sexual orientation or gender identity"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?came\s+out\s+(?:as\b|to\s+my\s+(?:family|parents|mom|mum|dad|friends"
            r"|wife|husband|boss|colleagues))"
            r"|\bmy\s+(?:same-sex|gay|lesbian)\s+(?:partner|relationship|marriage|wedding)"
            r"|\bi\s+am\s+(?:in\s+)?(?:a\s+)?(?:same-sex\s+relationship|an?\s+open\s+relationship"
            r"|polyamorous|a\s+virgin\b|celibate|a\s+sex\s+worker)"
            r"|\bi\s+am\s+(?:only\s+)?attracted\s+to\s+(?:men|women|both|guys|girls|the\s+same\s+sex"
            r"|people\s+of\s+the\s+same)|\bmy\s+sex\s+life\b|\bmy\s+sexual(?:ity|\s+orientation)\b"
            r"|\bi\s+am\s+transitioning\b(?!\s+(?:to|from|into|our|the|my\s+(?:team|role|career)))"
        ),
        "sexual orientation or sex life",
    ),
    (re.compile(_BE + _RELIGION), "religious belief"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?(?:converted\s+to|practi[cs]e|follow|believe\s+in|worship)\s+(?:the\s+)?"
            r"(?:islam|judaism|christianity|catholicism|buddhism|hinduism|sikhism|jainism|shinto"
            r"|taoism|paganism|wicca|god|jesus(?:\s+christ)?|allah|the\s+(?:bible|quran|koran|torah"
            r"|lord)|lord)\b"
            r"|\bi\s+(?:\w+\s+)?(?:go\s+to|attend|pray\s+at|worship\s+at)\s+(?:church|mass"
            r"|(?:the\s+|a\s+|my\s+|our\s+)?(?:mosque|synagogue|temple|shul|gurdwara|kingdom\s+hall"
            r"|church|parish|chapel|congregation))\b(?!\s+(?:street|road|st|lane|square|ruins|tour"
            r"|concert|wedding|fair|market|run))"
            r"|\bi\s+(?:\w+\s+)?pray\s+(?:every|daily|five|5|\d+\s+times|before|to\s+(?:god|allah"
            r"|jesus))"
            r"|\bi\s+(?:\w+\s+)?(?:observe|fast\s+(?:during|for|on)|keep|eat(?:\s+only)?)\s+(?:the\s+)?"
            r"(?:ramadan|shabbat|sabbath|lent|yom\s+kippur|passover|eid|kosher|halal)\b"
            r"|\bi\s+(?:\w+\s+)?wear\s+(?:a\s+)?(?:hijab|headscarf|niqab|burqa|kippah|yarmulke"
            r"|turban)\b"
            r"|\bmy\s+(?:religion|religious\s+(?:beliefs|views|practice)|faith(?!\s+in\b)|church"
            r"|mosque|synagogue|pastor|priest|imam|rabbi|parish|congregation|bible\s+study)\b"
            r"|\bas\s+an?\s+(?:devout\s+|practi[cs]ing\s+)?(?:muslim|christian|catholic|jew|hindu"
            r"|buddhist|sikh|mormon|atheist|agnostic|evangelical)\b"
        ),
        "religious belief",
    ),
    (re.compile(_BE + _POLITICS), "political opinion"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?(?:vote|voted|votes|voting)\s+(?:for\s+)?(?:the\s+)?(?:republicans?"
            r"|democrats?|democratic|gop|labour|conservatives?|tory|tories|lib\s+dems?|liberal"
            r"\s+democrats?|greens?|green\s+party|snp|reform(?:\s+uk)?|ukip|spd|cdu|csu|afd|fdp"
            r"|die\s+linke|linke|bsw|ndp|liberals|bloc|trump|biden|harris|kamala|obama|clinton"
            r"|sanders|bernie|desantis|macron|le\s+pen|m[eé]lenchon|modi|bjp)\b"
            r"|\bi\s+(?:\w+\s+)?vote[ds]?\s+(?:left|right)"
            + _CLAUSE_END
            + r"|\bi\s+(?:\w+\s+)?(?:support|back|campaign\s+for|donate\s+to)\s+(?:the\s+)?"
            r"(?:republicans|democrats|gop|labour\s+party|conservative\s+party|tories|lib\s+dems"
            r"|green\s+party|snp|reform\s+uk|ukip|spd|cdu|afd|fdp|bjp|trump|biden|harris|maga)\b"
            r"|\bi\s+(?:am\s+)?(?:a\s+)?(?:member\s+of|joined|belong\s+to|vote\s+for)\s+the\s+"
            r"(?:labou?r|conservative|republican|democratic|green|communist|socialist|libertarian"
            r"|liberal|liberal\s+democratic?|national|pirate|reform|left|workers'?|people'?s"
            r"|social\s+democratic|christian\s+democratic|free\s+democratic|independence"
            r"|freedom|progressive|alternative\s+for\s+germany)\s+party\b"
            r"|\bmy\s+political\s+(?:views|leanings?|affiliation|beliefs|party|opinions|stance"
            r"|orientation)\b|\bi\s+am\s+politically\s+\w+"
            r"|\bi\s+lean\s+(?:left|right|conservative|liberal|democrat|republican)" + _CLAUSE_END
        ),
        "political opinion",
    ),
    (
        re.compile(
            r"\bi\s+(?:am|was|have\s+been)\s+(?:a\s+|an\s+)?(?:(?:active|proud|paid-up)\s+)?"
            r"(?:union\s+(?:member|rep(?:resentative)?|steward|organi[sz]er)|shop\s+steward"
            r"|unioni[sz]ed|member\s+of\s+(?:the|a|my)\s+(?:\w+\s+){0,3}(?<!european\s)"
            r"(?<!student\s)(?<!students\s)(?<!students'\s)(?<!credit\s)(?<!postal\s)"
            r"(?<!rugby\s)union\b)"
            r"|\bi\s+(?:\w+\s+)?(?:joined|belong\s+to)\s+(?:the\s+|a\s+|my\s+)?(?:(?:trade|labou?r"
            r"|teachers'?|nurses'?|workers'?|local)\s+)+union\b"
            r"|\bi\s+(?:\w+\s+)?(?:joined|am\s+in|am\s+a\s+member\s+of|belong\s+to)\s+(?:the\s+)?"
            r"(?:teamsters|unison|unite\s+the\s+union|gmb|ver\.di|ig\s+metall|afl-cio|seiu|uaw"
            r"|rmt|cwu|unifor|the\s+nea|the\s+aft)\b|\bmy\s+(?:trade\s+)?union\s+(?:rep|dues"
            r"|membership|steward|card)\b"
        ),
        "trade-union membership",
    ),
    (re.compile(_BE + _ETHNICITY), "racial or ethnic origin"),
    (
        re.compile(
            r"\bmy\s+(?:ethnicity|race|ethnic\s+(?:background|origin|group|identity)|racial"
            r"\s+(?:background|identity))\b|\bi\s+am\s+of\s+(?:\w+\s+){1,2}(?:descent|heritage"
            r"|ancestry|ethnicity)\b|\bas\s+an?\s+(?:black|latina|latino|hispanic|asian|arab"
            r"|indigenous|native\s+american)\s+(?:woman|man|person)\b"
        ),
        "racial or ethnic origin",
    ),
    (
        re.compile(
            r"\bi\s+(?:have|had|got)\s+(?:a\s+)?(?:criminal|police)\s+record\b(?!\s+check)"
            r"|\bi\s+(?:\w+\s+)?(?:have|had|got)\s+(?:a\s+)?(?:prior\s+)?(?:felony|misdemeanou?r"
            r"|conviction(?!\s+that)|dui|dwi)\b|\bi\s+am\s+(?:an?\s+)?(?:convicted\s+|registered\s+)?(?:felon"
            r"|ex-con|ex-offender|sex\s+offender)\b|\bi\s+(?:was|got|have\s+been|had\s+been|am)"
            r"\s+(?:\w+\s+)?(?:convicted|arrested|incarcerated|imprisoned|jailed|sentenced|indicted"
            r"|on\s+parole|out\s+on\s+bail|charged\s+with\s+(?:a\s+)?(?:crime|felony|misdemeanou?r"
            r"|assault|theft|fraud|dui|dwi|drunk|possession|murder|manslaughter|battery|burglary"
            r"|robbery|shoplifting|vandalism|trespass\w*|drug\w*))\b"
            r"|\bi\s+(?:was|have\s+been|had\s+been|am)\s+(?:\w+\s+)?in\s+(?:prison|jail)\b"
            r"|\bi\s+(?:\w+\s+)?(?:served|did)\s+(?:time|\w+\s+(?:years?|months?)\s+in\s+(?:prison"
            r"|jail))\b|\bi\s+(?:went|was\s+sent)\s+to\s+(?:prison|jail)\b|\bi\s+spent\s+(?:\w+\s+)"
            r"{0,3}in\s+(?:prison|jail)\b|\bmy\s+(?:criminal\s+record|conviction|probation\s+officer"
            r"|parole\s+officer|prison\s+sentence|rap\s+sheet|arrest\s+record)\b"
        ),
        "criminal record",
    ),
    (
        re.compile(
            r"\bmy\s+(?:dna(?:\s+test)?|genome|genetic\s+(?:data|test|testing|results?|profile"
            r"|markers?|makeup)|23andme|ancestry\s?dna)(?:\s+(?:results?|data|report))?\s+"
            r"(?:shows?|showed|says|said|revealed|reveals|indicates?|is|are|came\s+back|results?)\b"
            r"|\bi\s+(?:\w+\s+)?(?:carry|have|tested\s+positive\s+for|am\s+a\s+carrier\s+(?:of|for))"
            r"\s+(?:the\s+|a\s+)?(?:brca[12]?|apoe\s?-?e?4|mthfr|lynch\s+syndrome|factor\s+v\s+leiden"
            r"|tay-sachs)(?:\s+(?:gene|mutation|variant|allele))?\b|\bi\s+am\s+a\s+carrier\s+(?:of"
            r"|for)\b|\bmy\s+(?:biometric\s+(?:data|template|profile)|fingerprint\s+(?:data|template"
            r"|hash)|face\s?print|voice\s?print|iris\s+scan|retina\s+scan|facial\s+(?:geometry"
            r"|template))\b"
        ),
        "genetic or biometric data",
    ),
)


def detect_sensitive_category(p: Prepared) -> Finding | None:
    for pattern, what in _SENSITIVE_RULES:
        if pattern.search(p.sem):
            return Finding("sensitive_category", f"a personal statement about {what}")
    return None


# ---------------------------------------------------------------------------------------------
# Inferred sensitive traits
# ---------------------------------------------------------------------------------------------

_SENTENCES: Final = re.compile(r"(?<=[.!?;])\s+|\n")
_TRAIT: Final = re.compile(
    r"\b(?:"
    + _CONDITION
    + r"|"
    + _HEALTH_ADJ
    + r"|"
    + _ORIENTATION
    + r"|"
    + _RELIGION
    + r"|"
    + _POLITICS
    + r"|"
    + _ETHNICITY
    + r"|"
    + _MEDICATION
    + r"|mental\s+health\s+(?:issues|problems|struggles)|criminal\s+record|suicid\w+)\b"
    + _TOPIC_AFTER
)
_HEDGE: Final = re.compile(
    r"\b(?:seems?|seemingly|appears?|apparently|looks?|sounds?|probably|likely|possibly"
    r"|presumably|perhaps|maybe|might|may|could|must|suspected|suspect|thought|believed|assumed"
    r"|inferred|infer|guess|signs?\s+of|indicat\w*|suggest\w*|consistent\s+with|implies"
    r"|hints?\s+(?:at|that)|chances\s+are|i\s+(?:bet|think|believe|reckon))\b"
)
_INFER_SUBJECT: Final = re.compile(
    r"\b(?:user|user's|customer|client|they|them|their|he|she|him|her|you|your|this\s+person"
    r"|the\s+person|individual)\b"
)
# Words between the hedge and the trait that show the trait is a topic of interest, not a trait.
_TOPIC_BETWEEN: Final = re.compile(
    r"\b(?:about|regarding|reading|researching|research|studying|interested|interest|writing"
    r"|article|articles|news|book|books|course|learn|learning|topics?|content|posts?|videos?"
    r"|discussing|asked|asking|questions?|help\s+with|work\s+on|works\s+on|working\s+on|like|likes"
    r"|enjoy|enjoys|fan|prefers?)\b"
)
_FIRST_PERSON: Final = re.compile(r"\b(?:i|me|my|we|us|our)\b")


def detect_inferred_trait(p: Prepared) -> Finding | None:
    for sentence in _SENTENCES.split(p.sem):
        if not _HEDGE.search(sentence):
            continue  # cheap pre-check: most sentences hedge nothing, and _TRAIT is large
        for trait in _TRAIT.finditer(sentence):
            hedges = list(_HEDGE.finditer(sentence, 0, trait.start()))
            if not hedges:
                continue
            between = sentence[hedges[-1].end() : trait.start()]
            if len(between.split()) > 6 or _TOPIC_BETWEEN.search(between):
                continue
            head = sentence[: trait.start()]
            about_someone = _INFER_SUBJECT.search(head) is not None
            # A bare inference ("likely has ADHD", "probably gay") starts with its hedge; a
            # hedged statement about oneself ("I think I might have ADHD") is a disclosure and
            # is left to the health and category detectors.
            bare = hedges[0].start() <= 12 and not _FIRST_PERSON.search(head)
            if about_someone or bare:
                return Finding(
                    "inferred_sensitive_trait",
                    "an inference about a person's health or other sensitive trait",
                )
    return None
