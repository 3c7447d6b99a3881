"""Sensitive disclosures in Polish and Turkish.

The rule of the other languages (``detect_sensitive``, ``detect_sensitive_i18n``): a *subject* (I,
a person close to me) bound by a verb to a *sensitive term* — a disclosure ("mam cukrzycę",
"şeker hastasiyim") — while a topic ("pracuję nad lekiem na cukrzycę", "kanser araştirmasi
yapiyorum") passes. Turkish puts the subject into the word's ending ("diyabetim var": my
diabetes exists; "eşcinselim": I am gay), so its rules read those endings.

The policy reads normalised, lower-cased text (``normalize.py``), where Turkish's dotless i is the
Latin "i" (a confusable): the Turkish patterns are written in that form ("hastasiyim").
"""

from __future__ import annotations

import re
from typing import Final

# -------------------------------------------------------------------------------------- Polish
_PL_CLOSE: Final = (
    r"(?:mam[aey]|matk[aię]|tat[aey]|ojc(?:iec|a)|mąż|męża|żon[aey]|syn(?:a)?|córk[aię]|brat(?:a)?"
    r"|siostr[aeyz]|babci[aę]?|dziad(?:ek|ka)|partner(?:ka|a|ki)?|chłopak(?:a)?|dziewczyn[aey])"
)
_PL_WHO_HAS: Final = (
    r"(?:\bmam|\bmiałe?m|\bmiałam|\bchoruję|\bchorowałe?m|\bcierpię|\bleczę\s+się"
    r"|\bzdiagnozowano\s+u\s+mnie|\bwykryto\s+u\s+mnie|\bjestem\s+chor[ya]"
    r"|\bmo(?:ja|j|je)\s+" + _PL_CLOSE + r"\s+(?:ma|miał[a]?|choruje|cierpi|jest\s+chor[ya])"
    r"|\bmój\s+" + _PL_CLOSE + r"\s+(?:ma|miał|choruje|cierpi|jest\s+chory))"
)
_PL_COND: Final = (
    r"(?:cukrzyc\w*|rak(?:a|iem)?|nowotw[oó]r\w*|depresj\w*|astm\w*|hiv|aids|padaczk\w*"
    r"|epilepsj\w*|schizofreni\w*|chorob\w+\s+(?:afektywn\w+\s+dwubiegunow\w+|alzheimera"
    r"|parkinsona|nowotworow\w+)|nadciśnieni\w*|autyzm\w*|adhd|białaczk\w*|anoreksj\w*|bulimi\w*"
    r"|nerwic\w*|stwardnieni\w+\s+rozsian\w+|zaburzeni\w+\s+lękow\w+|ptsd|żółtaczk\w*"
    r"|zapaleni\w+\s+wątroby|bezpłodnoś\w*)"
)
_PL_HEALTH: Final = re.compile(
    _PL_WHO_HAS + r"\s+(?:na\s+)?(?:\w+\s+){0,2}?" + _PL_COND + r"\b"
    + r"|\bjestem\s+(?:w\s+ciąży|diabetykiem|diabetyczką|cukrzykiem|nosicielem\s+hiv"
    r"|nosicielką\s+hiv|seropozytywn\w+|uczulon[ya]\s+na)"
    + r"|\b(?:biorę|przyjmuję)\s+(?:insulinę|antydepresanty|leki\s+przeciwdepresyjne"
    r"|neuroleptyki)"
)  # fmt: skip
_PL_SENSITIVE: Final = re.compile(
    r"\b(?:jestem|mo(?:ja|j)\s+" + _PL_CLOSE + r"\s+jest|mój\s+" + _PL_CLOSE + r"\s+jest)\s+"
    r"(?:gejem|gejką|lesbijką|biseksualist\w+|biseksualn\w+|transpłciow\w+|osobą\s+transpłciową"
    r"|homoseksualist\w+|muzułmanin\w*|muzułmank\w+|żydem|żydówką|ateist\w+|buddyst\w+"
    r"|katolik\w*|katoliczk\w+|protestant\w+|świadkiem\s+jehowy|komunist\w+|socjalist\w+)\b"
    + r"|\bnależę\s+do\s+(?:partii|związku\s+zawodowego)"
    + r"|\bjestem\s+członk\w+\s+(?:partii|związku\s+zawodowego)"
    + r"|\b(?:głosuję|głosowałe?m|głosowałam|zagłosowałe?m|zagłosowałam)\s+na\b"
)  # fmt: skip

# ------------------------------------------------------------------------------------- Turkish
_TR_COND: Final = (
    r"(?:diyabet|şeker|kanser|astim|astm|epilepsi|sara|depresyon|hiv|aids|alzheimer"
    r"|parkinson|lösemi|hepatit|otizm|şizofreni|bipolar|panik\s+atak|anoreksi|bulimi|tümör"
    r"|multipl\s+skleroz|tansiyon|kalp\s+hastaliğ|obsesif\s+kompulsif|ptsd|kisirlik)"
)
# "şekerim" is also "my sweet", "sara" a name: neither reads as a diagnosis by its ending alone
_TR_OWN: Final = _TR_COND.replace("|şeker", "").replace("|sara", "")
_TR_HEALTH: Final = re.compile(
    # "diyabetim var", "kanserim", "astimim var", "annemin diyabeti var"
    r"\b" + _TR_COND + r"(?:[iuü]?m|[iuü]m[iuü]z)\s+(?:var|oldu|çikti|teşhis)"
    + r"|\b(?:ben(?:im)?\s+)?" + _TR_OWN + r"(?:[iuü]?m)\b(?!\s+(?:yok|değil))"
    + r"|\b(?:annem|babam|eşim|kocam|karim|oğlum|kizim|kardeşim|ablam|abim|ninem|dedem)(?:in)?"
    r"\s+(?:\w+\s+)?" + _TR_COND + r"\w*\s+(?:var|hastasi|oldu)"
    # "şeker hastasiyim", "kanser hastasiyim", "depresyondayim", "hamileyim", "HIV pozitifim"
    + r"|\b" + _TR_COND + r"\s+hastasiyim"
    + r"|\b(?:depresyondayim|hamileyim|gebeyim|hiv\s*pozitifim|hiv\s*pozitif\s+biriyim)"
    + r"|\b(?:bana|bende)\s+(?:\w+\s+){0,2}?" + _TR_COND + r"\w*\s+(?:teşhisi|tanisi)\s+kondu"
    + r"|\b\w+\s+alerjim\s+var"
)  # fmt: skip
_TR_SENSITIVE: Final = re.compile(
    r"\b(?:ben\s+)?(?:eşcinselim|geyim|gayim|lezbiyenim|biseksüelim|transim|trans\s+bireyim"
    r"|müslümanim|hristiyanim|yahudiyim|ateistim|budistim|alevi(?:yim)|komünistim|sosyalistim)\b"
    + r"|\b\w+\s+partisi(?:nin)?\s+üyesiyim|\bsendika\s+üyesiyim"
    + r"|\b\w+(?:'?[yn]?[ea])\s+oy\s+(?:verdim|veririm|veriyorum)"
)  # fmt: skip


def health_disclosure(lower: str) -> bool:
    """A first-person (or close person's) health statement in Polish or Turkish (``lower``:
    the lower-cased normalised text)."""
    return bool(_PL_HEALTH.search(lower) or _TR_HEALTH.search(lower))


def sensitive_disclosure(lower: str) -> bool:
    """Orientation, religion or party / union membership or a vote stated in those languages."""
    return bool(_PL_SENSITIVE.search(lower) or _TR_SENSITIVE.search(lower))
