"""Detectors for structured secrets: credentials, payment cards, bank accounts, government ids.

They work on the NFKC-normalised text with its case kept (key formats are case-sensitive) and
validate numbers with their checksums, so order numbers, ISBNs and the like pass.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.detect_common import (
    HEX_OR_UUID,
    IBAN_LENGTHS,
    Finding,
    Prepared,
    iban_valid,
    looks_random,
    luhn_valid,
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
        if value.lower() in _NOT_A_VALUE or (HEX_OR_UUID.fullmatch(value) and len(value) < 16):
            return False
        return (
            looks_random(value)
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
            if not needs_random or looks_random(m.group(0).split("-", 1)[-1]):
                return Finding("credential", f"looks like {what}")
    for m in _CONN_STRING.finditer(text):
        if not _PLACEHOLDER.match(m.group("pw")):
            return Finding("credential", "a connection string with an embedded password")
    for m in _BEARER.finditer(text):
        if looks_random(m.group("v")):
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
        if ("aws" in before or "secret" in before) and looks_random(m.group(0)):
            return Finding("credential", "looks like an AWS secret access key")
    for m in _LONG_TOKEN.finditer(text):
        token = m.group(0)
        if HEX_OR_UUID.fullmatch(token) or not looks_random(token):
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
        length = IBAN_LENGTHS.get(compact[:2])
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
