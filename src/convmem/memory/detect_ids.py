"""Government-issued id numbers: national ids, tax ids, social-security and passport numbers.

Three ways a number counts as an id:

* **its own shape and checksum**, for formats distinctive enough that a valid one is an id
  wherever it appears: US SSNs, UK NI numbers, Spanish DNI/NIE, French NIR (INSEE), Italian codice
  fiscale, Aadhaar written 4-4-4, Brazilian CPF and Swiss AHV written with their separators;
* **a label naming the id** in English, German, French, Spanish, Italian, Portuguese or Dutch
  ("passport", "Steuer-ID", "numéro de sécurité sociale", "codice fiscale", "burgerservicenummer"
  ...) followed by an id-shaped value;
* **a short abbreviation** that is also an ordinary word in some language ("nie", "sin", "pan",
  "nas", "cf") followed by a value that passes the checksum of one of the national id formats
  below, in any letter case; in capitals ("SIN", "BSN", "DNI") an id-shaped value is enough.

Checksums come from ``python-stdnum`` (maintained, one module per national format), not from
hand-written code.
"""

from __future__ import annotations

import importlib
import re
from typing import Final, Protocol, cast

from convmem.memory.detect_common import Finding, Prepared
from convmem.memory.normalize import any_case_pattern


class _Validator(Protocol):
    def is_valid(self, number: str) -> bool: ...


def _stdnum(name: str) -> _Validator:
    return cast(_Validator, importlib.import_module(f"stdnum.{name}"))


# Personal national ids with a check digit (not company or VAT numbers, which are not personal
# data, and not US SSNs, which have no checksum: any nine digits would pass).
_NATIONAL_IDS: Final = tuple(
    _stdnum(name)
    for name in (
        "es.dni", "es.nie", "es.nif", "de.idnr", "fr.nir", "it.codicefiscale", "ca.sin", "nl.bsn",
        "in_.aadhaar", "br.cpf", "pl.pesel", "be.nn", "pt.nif", "pt.cc", "ch.ssn", "gb.nhs",
        "dk.cpr", "se.personnummer", "no.fodselsnummer", "fi.hetu", "ie.pps", "at.vnr", "mx.curp",
        "cn.ric", "za.idnr", "tr.tckimlik", "ro.cnp", "il.idnr", "gr.amka", "kr.rrn", "cl.rut",
    )
)  # fmt: skip
_DNI, _NIE, _NIR, _CODICE_FISCALE, _AADHAAR, _CPF, _AHV = (
    _stdnum(n)
    for n in ("es.dni", "es.nie", "fr.nir", "it.codicefiscale", "in_.aadhaar", "br.cpf", "ch.ssn")
)


def _national_id(value: str) -> bool:
    return any(v.is_valid(value) for v in _NATIONAL_IDS)


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
# Formats whose shape and checksum together identify them without a label.
_SHAPED: Final[tuple[tuple[re.Pattern[str], _Validator], ...]] = (
    (re.compile(r"(?<![\w-])\d{8}[ -]?[A-Za-z](?![\w-])"), _DNI),
    (re.compile(r"(?<![\w-])[XYZxyz][ -]?\d{7}[ -]?[A-Za-z](?![\w-])"), _NIE),
    (
        re.compile(
            r"(?<![\d.-])[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[ABab]) ?\d{3} ?\d{3}"
            r" ?\d{2}(?![\d.-])"
        ),
        _NIR,
    ),
    (
        re.compile(r"(?<!\w)[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z](?!\w)"),
        _CODICE_FISCALE,
    ),
    (
        re.compile(r"(?<![\d -])[2-9]\d{3}([ -])\d{4}\1\d{4}(?![\d-]|\s\d)"),
        _AADHAAR,
    ),
    (re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])"), _CPF),
    (re.compile(r"(?<![\d.])756\.\d{4}\.\d{4}\.\d{2}(?![\d.])"), _AHV),
)

# An id value: tokens that each contain a digit, e.g. "C01X00T47", "123 456 789", "A123-4567".
_ID_VALUE: Final = (
    r"(?P<v>[A-Za-z0-9]*\d[A-Za-z0-9]*(?:[ ./-][A-Za-z0-9]*\d[A-Za-z0-9]*){0,6}"
    r"(?:[ -]?[A-Za-z](?![A-Za-z]))?)"
)
_VERB: Final = r"is|was|ist|lautet|war|est|c'est|es|era|è|é|to|je|zijn"
_ID_LEAD: Final = (
    r"(?:\s*(?:number|num|no\.?|nr\.?|#|id|code|nummer|num[ée]ro|n[úu]mero|numero))?\s*"
    r"(?:(?:" + _VERB + r"|:|=|-|#)\s*)?"
)
_ID_LABELS: Final = (
    # English
    r"passport|driver'?s?\s+licen[cs]e|driving\s+licen[cs]e|national\s+(?:id|identity|insurance)"
    r"(?:\s+card)?|identity\s+card|id\s+card|tax\s+(?:id|identification|file|code)"
    r"|social\s+insurance|aadhaa?r|nhs|medicare|health\s+insurance|resident\s+registration"
    r"|green\s+card|alien\s+registration|voter\s+id|permanent\s+account\s+number|carte\s+vitale"
    # German
    r"|personalausweis\w*|ausweis\w*|reisepass\w*|f[üu]hrerschein\w*|steuer-?id|steuer-?nummer"
    r"|(?:steuerliche\s+)?identifikationsnummer|steueridentifikationsnummer"
    r"|sozialversicherungsnummer|rentenversicherungsnummer|versichertennummer|ahv-?nummer"
    # French
    r"|num[ée]ro\s+de\s+s[ée]curit[ée]\s+sociale|s[ée]curit[ée]\s+sociale|num[ée]ro\s+insee|insee"
    r"|num[ée]ro\s+fiscal|carte\s+d'identit[ée]|passeport|permis\s+de\s+conduire|num[ée]ro\s+de\s+s[ée]cu"
    r"|num[ée]ro\s+d'assurance\s+sociale"
    # Spanish, Italian, Portuguese
    r"|documento\s+(?:nacional\s+)?de\s+identidad|seguridad\s+social|pasaporte|carn[ée]\s+de"
    r"\s+(?:identidad|conducir)|c[ée]dula(?:\s+de\s+identidad)?|codice\s+fiscale|tessera\s+sanitaria"
    r"|carta\s+d'identit[àa]|passaporto|patente(?:\s+di\s+guida)?|cart[ãa]o\s+de\s+cidad[ãa]o"
    r"|n[úu]mero\s+de\s+contribuinte|n[úu]mero\s+de\s+utente|seguran[çc]a\s+social"
    r"|documento\s+de\s+identidade|passaporte|carteira\s+de\s+identidade"
    # Dutch, Nordic, other
    r"|burgerservicenummer|sofinummer|paspoort\w*|rijbewijs\w*|identiteitskaart|rijksregisternummer"
    r"|personnummer|pesel|sozialversicherung|personal\s+identity\s+number"
)
_ID_CONTEXT_CI: Final = re.compile(
    r"(?i)(?<![^\W\d_])(?:" + _ID_LABELS + r")" + _ID_LEAD + _ID_VALUE
)
# Abbreviations that are ordinary words in lower case ("sin", "pan", "tin") only count in capitals.
_ID_CONTEXT_CS: Final = re.compile(
    r"\b(?:SIN|TIN|ITIN|TFN|DL|BSN|DNI|NIE|NIF|NIR|CPF|CURP|RFC|NRIC|PAN|CPR|NINO|PPSN|EIN|SVNR"
    r"|AHV|NAS|UID|INSEE|SSN)" + _ID_LEAD + _ID_VALUE
)
# The same abbreviations in any case, when the value passes a national-id checksum.
_ID_ABBREV_ANY_CASE: Final = re.compile(
    r"(?i)\b(?:sin|bsn|dni|nie|nif|nir|cpf|curp|nas|uid|ssn|svnr|ahv|pps|cf|rrn|cnp|amka|rut"
    r")" + _ID_LEAD + _ID_VALUE
)

# A label in a language whose verbs and number words the leads above do not know ("personnummer
# är", "TC kimlik numaram", "numer PESEL to"): up to two words of any language may sit between
# label and value, so the value must pass a national-id checksum.
_ID_LABEL_ANY_LINK: Final = re.compile(
    r"(?i)(?<![^\W\d_])(?:"
    + _ID_LABELS
    + r"|kimlik|henkil[öo]tunnus|f[øo]dselsnummer|cpr|dowodu|tckn)(?![^\W\d_])"
    r"[\s:=#.-]{0,3}(?:[^\W\d_]{1,12}[\s:=#.]{1,3}){0,2}" + _ID_VALUE
)

# A label in Russian, Chinese, Japanese or Korean, then up to a few characters (a particle, a
# verb, "номер") and an id-shaped value: these scripts write no space between label and value
# ("我的身份证号是…", "マイナンバーは…"), so no word boundary is asked for. The text is normalised,
# where Cyrillic look-alikes of Latin letters are Latin (``any_case_pattern``).
_ID_LABEL_CJK_RU: Final = re.compile(
    r"(?i)(?:"
    + any_case_pattern(
        r"паспорт\w*|снилс|инн|удостоверени\w+\s+личности|водительск\w+\s+(?:прав|удостоверени)\w*"
    )
    + r"|身份证|身份證|护照|護照|社会保障|社會保障|驾驶证|駕駛證|居民证|マイナンバー|個人番号"
    r"|パスポート|旅券|運転免許|住民票コード|基礎年金番号|주민\s*등록\s*번호|주민번호|여권"
    r"|외국인\s*등록\s*번호|운전\s*면허)"
    r"[^\d\n]{0,12}?" + _ID_VALUE
)


def _id_value_ok(value: str) -> bool:
    compact = re.sub(r"[ ./-]", "", value)
    digits = sum(c.isdigit() for c in compact)
    # Years ("expires 2027") and short counts are not ids; ids are 6+ characters, mostly digits
    # or mixed ("C01X00T47").
    return 6 <= len(compact) <= 20 and digits >= 4 and not re.fullmatch(r"(?:19|20)\d\d", compact)


def detect_government_id(p: Prepared) -> Finding | None:
    if p.digits < 4:
        return None  # every id format and every labelled value has four digits or more
    text = p.text
    if _SSN.search(text) or _SSN_CONTEXT.search(text):
        return Finding("government_id", "a US social security number")
    if _NINO.search(text) or _NINO_CONTEXT.search(text):
        return Finding("government_id", "a UK national insurance number")
    for pattern, validator in _SHAPED:
        for m in pattern.finditer(text):
            if validator.is_valid(m.group(0)):
                return Finding("government_id", "a national id number (valid checksum)")
    for pattern in (_ID_CONTEXT_CI, _ID_CONTEXT_CS, _ID_LABEL_CJK_RU):
        for m in pattern.finditer(text):
            if _id_value_ok(m.group("v")):
                return Finding("government_id", "a government-issued id number")
    for pattern in (_ID_ABBREV_ANY_CASE, _ID_LABEL_ANY_LINK):
        for m in pattern.finditer(text):
            if _national_id(m.group("v")):
                return Finding("government_id", "a national id number (valid checksum)")
    return None
