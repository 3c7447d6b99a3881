"""Detectors for structured secrets: credentials, payment cards, bank accounts (government ids are
in ``detect_ids``).

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
from convmem.memory.detect_keywords import PLACEHOLDER, detect_keyword_credential
from convmem.memory.detect_keywords_i18n import detect_keyword_credential_i18n
from convmem.memory.detect_scanner import scanner_finds_secret

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
_BEARER: Final = re.compile(r"\b(?:bearer|token)\s+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)", re.I)
_BASIC_AUTH: Final = re.compile(
    r"\bauthorization:?\s+basic\s+(?P<v>[A-Za-z0-9+/]{12,}={0,2})", re.I
)

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
    scanned = scanner_finds_secret(text)
    if scanned is not None:
        return Finding("credential", "looks like a provider key or token (detect-secrets)")
    for m in _CONN_STRING.finditer(text):
        if not PLACEHOLDER.match(m.group("pw")):
            return Finding("credential", "a connection string with an embedded password")
    for m in _BEARER.finditer(text):
        if looks_random(m.group("v")):
            return Finding("credential", "a bearer token")
    if _BASIC_AUTH.search(text):
        return Finding("credential", "HTTP basic-auth credentials")
    finding = detect_keyword_credential(text) or detect_keyword_credential_i18n(text)
    if finding is not None:
        return finding
    lowered = text.lower()
    for m in _AWS_SECRET.finditer(text):
        before = lowered[max(0, m.start() - 60) : m.start()]
        token = m.group(0)
        # AWS secrets are 40 base64 characters; published ones may hold a single digit
        varied = len(set(token)) >= 20 and not token.isalpha() and token != token.lower()
        if ("aws" in before or "secret" in before) and (looks_random(token) or varied):
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
# 13-19 digits, one space, dash or dot allowed between any two, not part of a longer digit run.
_CARD_CANDIDATE: Final = re.compile(
    r"(?<![0-9+])(?<![0-9][ .-])[0-9](?:[ .-]?[0-9]){12,18}(?![ .-]?[0-9])"
)
# "card" and its neighbours in English, German, French, Spanish, Italian, Portuguese and Dutch.
_CARD_WORDS: Final = (
    r"card|visa|master\s?card|amex|american\s+express|discover|diners|jcb|unionpay|maestro|credit"
    r"|debit|cc|pan|payment|pay\s+with|billing|[a-zäöü]*karte|kartennummer|carte|cb|tarjeta|carta"
    r"|cart[ãa]o|[a-z]*kaart|creditcard\w*|bankomat|bancomat"
)
_CARD_CONTEXT: Final = re.compile(r"(?i)\b(?:" + _CARD_WORDS + r")\b")
_VERBS: Final = r"is|ist|lautet|est|es|è|é|c'est"
_CVV: Final = re.compile(
    r"(?i)\b(?:cvv2?|cvc2?|cvn|card\s+(?:security|verification)\s+(?:code|value|number)"
    r"|kartenpr[üu]fnummer|cryptogramme(?:\s+visuel)?)\b"
    r"(?:\s+(?:of|on|der|de|du|del|della|da|do|van)\s+(?:\S+\s+){0,2}?\S+)?"
    r"\W{0,3}(?:(?:is|code|number|" + _VERBS + r")\s+)?[:=#]?\s*\d{3,4}\b"
)
_CARD_ONLY_CODE: Final = re.compile(
    r"(?i)\b(?:cid|csc|security\s+code|sicherheitscode|pr[üu]fnummer|pr[üu]fziffer|code\s+de"
    r"\s+s[ée]curit[ée]|c[oó]digo\s+de\s+seguran?[çc]a|codice\s+di\s+sicurezza"
    r"|beveiligingscode|c[oó]digo\s+de\s+seguridad)\b"
    # "on the back of my card", "auf der Rückseite meiner Karte"
    r"(?:\s+(?:of|on|der|de|du|del|della|da|do|van|auf|sur|en|al|sul|no|op)\s+(?:\S+\s+){0,5}?\S+)?"
    r"\W{0,3}(?:(?:" + _VERBS + r")\s+)?[:=#]?\s*\d{3,4}\b"
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
    """Cards are written unbroken, in fours, Amex/Diners style 4-6-5 / 4-6-4, or spaced out one
    digit at a time; with one kind of separator throughout."""
    if len(set(re.findall(r"[ .-]", candidate))) > 1:
        return False
    groups = [len(g) for g in re.split(r"[ .-]", candidate)]
    if len(groups) == 1 or all(g == 1 for g in groups):
        return True
    if groups in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4


def detect_payment_card(p: Prepared) -> Finding | None:
    if p.digits < 3:
        return None  # a card number, a security code and an expiry date all have 3+ digits
    text = p.text
    context = _CARD_CONTEXT.search(text) is not None
    for m in _CARD_CANDIDATE.finditer(text):
        candidate = m.group(0)
        digits = re.sub(r"[ .-]", "", candidate)
        if not (13 <= len(digits) <= 19) or len(set(digits)) == 1:
            continue
        if not _card_grouping_ok(candidate) or not _plausible_iin(digits) or not luhn_valid(digits):
            continue
        # 15/16 digits are the card lengths in use; other lengths need a word like "card" nearby,
        # because 13-digit EAN barcodes and long reference numbers pass Luhn one time in ten.
        if len(digits) in (15, 16) or context or not candidate.isdigit():
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
# The same label in German, French, Spanish, Italian, Portuguese and Dutch, and the German bank
# code ("BLZ") or account ("Konto") before digits.
_ACCOUNT_NUMBER_I18N: Final = re.compile(
    r"(?i)(?<![^\W\d_])(?:konto(?:nummer|nr\.?)?|bankverbindung|num[ée]ro\s+de\s+(?:mon\s+)?compte"
    r"(?:\s+bancaire)?|n°\s*de\s+compte|n[úu]mero\s+de\s+(?:mi\s+)?cuenta(?:\s+bancaria)?"
    r"|n[úu]mero\s+(?:de\s+|da\s+)(?:minha\s+)?conta(?:\s+banc[áa]ria)?|numero\s+di\s+conto"
    r"(?:\s+corrente)?|conto\s+corrente|(?:bank)?rekening(?:nummer)?|blz|bankleitzahl)"
    r"(?![^\W\d_])\W{0,3}(?:(?:ist|lautet|est|es|è|é|is|:|=)\s*)?#?\s*(?P<v>\d(?:[ -]?\d){5,19})\b"
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
    if not p.digits:
        return None  # every account, routing, sort and branch code format holds a digit
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
    if (
        _ACCOUNT_NUMBER.search(text)
        or _BANK_ACCOUNT_IS.search(text)
        or _ACCOUNT_NUMBER_I18N.search(text)
    ):
        return Finding("bank_account", "a bank account number")
    if _ROUTING.search(text):
        return Finding("bank_account", "a bank routing number")
    if _SORT_CODE.search(text) or _BSB.search(text) or _IFSC.search(text):
        return Finding("bank_account", "a bank sort code or branch code")
    return None
