"""Political opinion, criminal record and ethnic origin stated in German, French, Spanish, Italian,
Portuguese and Dutch (GDPR art. 9 and 10), beside ``detect_sensitive_i18n``.

The English rules know a vote in any tense, an ideology ("I'm a communist", "I'm left-wing"), a
party card and a prison term; these are the same statements in the six other languages the
policy claims: "voté a Podemos", "soy de izquierdas", "ich bin SPD-Mitglied", "j'ai un casier
judiciaire", "sono stato in carcere", "ik heb op GroenLinks gestemd". Each needs the speaker
(a first-person verb form) bound to the term, so a topic ("estudio ciencias políticas", "voy a
votar mañana", "un documental sobre la cárcel") passes.

Patterns read the lower-cased, normalised text and are bounded.
"""

from __future__ import annotations

import re
from typing import Final

# A word that is also an ordinary adjective ("links", "liberal", "rechts") counts only where the
# clause ends after it, as in the English rules.
_END: Final = (
    r"(?=\s*(?:$|[.,;:!?)\x22'\u2014\u2013-]|y\b|e\b|und\b|et\b|en\b|pero\b|mais\b|aber\b|ma\b"
    r"|mas\b|maar\b))"
)

# Ideologies, as nouns or adjectives, in all six languages (masculine and feminine forms).
_IDEOLOGY: Final = (
    r"(?:comunista|socialista|anarquista|anarchic[oa]|anarchiste|fascista|fasciste|franquista"
    r"|falangista|independentista|nacionalista|nazionalista|nationaliste|marxista|marxiste"
    r"|leninista|trotskista|trotskiste|peronista|chavista|bolsonarista|petista|lulista"
    r"|sovranista|leghista|grillino|grillina|kommunist(?:in)?|sozialist(?:in)?|anarchist(?:in)?"
    r"|faschist(?:in)?|nazi|neonazi|marxist(?:in)?|kommunistisch|sozialistisch"
    r"|communiste|socialiste|communist|socialist|fascist|anarchist|marxist|populist(?:a|e)?"
    r"|gauchiste|d'extr[êe]me[\s-](?:gauche|droite)|de\s+(?:extrema\s+)?(?:izquierdas?|derechas?)"
    r"|de\s+(?:gauche|droite)|di\s+(?:estrema\s+)?(?:sinistra|destra)|de\s+(?:extrema[\s-])?"
    r"(?:esquerda|direita)|links(?:radikal|extrem)?|rechts(?:radikal|extrem)?|linksgerichte?"
    r"|rechtsgerichte?|extreem[\s-](?:links|rechts))"
)
_PARTY: Final = (
    r"(?:pp|psoe|vox|podemos|sumar|ciudadanos|bildu|erc|junts|pnv|iu|cdu|csu|spd|afd|fdp|bsw"
    r"|gr[üu]ne[n]?|linke[n]?|die\s+linke|rn|fn|lfi|ps|lr|eelv|renaissance|reconqu[êe]te"
    r"|rassemblement\s+national|front\s+national|france\s+insoumise|les\s+r[ée]publicains"
    r"|m[ée]lenchon|le\s+pen|macron|zemmour|bardella|pd|m5s|lega|fratelli\s+d'italia|fdi"
    r"|forza\s+italia|meloni|salvini|schlein|conte|psd|chega|bloco|livre|iniciativa\s+liberal"
    r"|cds|pcp|pt|pl|psol|lula|bolsonaro|vvd|pvv|d66|cda|groenlinks|pvda|sp|bbb|nsc|fvd|ja21"
    r"|volt|wilders|partido\s+\w+|partij\s+\w+|parti\s+\w+|partei\s+\w+|partito\s+\w+)"
)
_ART: Final = (
    r"(?:(?:a|al|a\s+la|à|au|aux|por|pour|per|no|na|em|op|voor|el|la|le|les|il|o|de|die|den"
    r"|der|das)\s+)?"
)

_POLITICS: Final = re.compile(
    # a vote, in any tense: "voté a", "j'ai voté", "ho votato", "votei no", "ik heb ... gestemd"
    r"\b(?:(?:yo\s+)?(?:voto|vot[ée]|votar[ée]|he\s+votado|siempre\s+voto|votamos)"
    r"|(?:je\s+)?(?:vote|votais|voterai)|j'ai\s+(?:toujours\s+)?vot[ée]|(?:io\s+)?(?:voto|votavo"
    r"|voter[òo])|ho\s+(?:sempre\s+)?votato|(?:eu\s+)?(?:voto|votei|votarei|sempre\s+voto)"
    r"|ich\s+(?:w[äa]hle|w[äa]hlte)|ik\s+(?:stem|stemde))\s+(?:\w+\s+)?" + _ART + _PARTY + r"\b"
    r"|\bich\s+habe\s+(?:\w+\s+){0,2}?" + _ART + _PARTY + r"\s+gew[äa]hlt\b"
    r"|\bik\s+heb\s+(?:\w+\s+){0,2}?op\s+(?:de\s+|het\s+)?" + _PARTY + r"\s+gestemd\b"
    # an ideology or a side: "soy comunista", "je suis de gauche", "ich bin links"
    r"|\b(?:soy|sou|sono|je\s+suis|ich\s+bin|ik\s+ben)\s+(?:(?:muy|bien|très|sehr|molto|muito|erg"
    r"|heel|un|una|um|uma|une|ein|eine|een|totalmente|ziemlich|assez|bastante)\s+)?"
    + _IDEOLOGY
    + _END
    # a party card or a supporter's label: "soy votante del PP", "ich bin SPD-Mitglied"
    + r"|\b(?:soy|sou|sono|je\s+suis|ich\s+bin|ik\s+ben)\s+(?:\w+\s+)?(?:votante|simpatizante"
    r"|militante|afiliad[oa]|elector[a]?|[ée]lect(?:eur|rice)|sympathisant(?:e)?|militant(?:e)?"
    r"|adh[ée]rent(?:e)?|elettore|elettrice|simpatizzante|iscritt[oa]|eleitor(?:a)?|filiad[oa]"
    r"|w[äa]hler(?:in)?|anh[äa]nger(?:in)?|mitglied|kiezer|stemmer|aanhanger|lid)\s+"
    r"(?:de|del|de\s+la|du|de\s+l'|des|di|del|della|dei|do|da|der|des|van|bij|von|vom)\s+"
    r"(?:\w+\s+)?"
    + _PARTY
    + r"\b"
    + r"|\b(?:soy|sou|sono)\s+(?:del|de\s+la|do|da|della)\s+"
    + _PARTY
    + r"\b"
    r"|\bich\s+bin\s+(?:\w+-)?(?:"
    + _PARTY
    + r")-?(?:mitglied|w[äa]hler(?:in)?|anh[äa]nger(?:in)?)\b"
    r"|\b(?:milito|milit[ée]|apoyo\s+a|je\s+milite|ich\s+unterst[üu]tze|sostengo|apoio\s+o|apoio"
    r"\s+a|ik\s+steun)\s+(?:en\s+|dans\s+|au\s+|à\s+|in\s+|per\s+|o\s+|a\s+|die\s+|de\s+|het\s+)?"
    + _PARTY
    + r"\b"
)

_RECORD: Final = re.compile(
    r"\btengo\s+antecedentes(?:\s+penales)?|\b(?:estuve|he\s+estado|estoy)\s+(?:\w+\s+)?(?:en\s+)?"
    r"(?:la\s+)?(?:c[áa]rcel|prisi[óo]n)|\b(?:me\s+condenaron|fui\s+condenad[oa]|me\s+detuvieron"
    r"|estoy\s+en\s+libertad\s+condicional)"
    r"|\bich\s+bin\s+vorbestraft|\bich\s+(?:sa[ßs]|war|habe\s+\w+\s+im\s+gef[äa]ngnis|bin\s+im"
    r"\s+gef[äa]ngnis)(?:\s+\w+){0,3}?\s+(?:im\s+)?(?:gef[äa]ngnis|knast|haft)"
    r"|\bich\s+(?:wurde|bin)\s+(?:\w+\s+)?(?:verurteilt|inhaftiert|auf\s+bew[äa]hrung)"
    r"|\bich\s+habe\s+(?:eine\s+)?(?:vorstrafe|vorstrafen|bew[äa]hrung)"
    r"|\bj'ai\s+(?:un\s+)?casier(?:\s+judiciaire)?|\bj'ai\s+fait\s+(?:\w+\s+)?(?:de\s+la\s+)?prison"
    r"|\bj'ai\s+[ée]t[ée]\s+(?:condamn[ée]e?|incarc[ée]r[ée]e?)|\bje\s+suis\s+(?:en\s+)?libert[ée]"
    r"\s+conditionnelle"
    r"|\bho\s+(?:dei\s+)?precedenti\s+penali|\bsono\s+stat[oa]\s+(?:\w+\s+)?(?:in\s+carcere|in"
    r"\s+prigione|condannat[oa]|arrestat[oa])"
    r"|\btenho\s+(?:antecedentes\s+criminais|cadastro|registo\s+criminal)|\b(?:estive|fiquei)"
    r"\s+(?:\w+\s+)?(?:pres[oa]|na\s+pris[ãa]o|na\s+cadeia)|\bfui\s+(?:condenad[oa]|pres[oa])"
    r"|\bik\s+heb\s+(?:een\s+)?strafblad|\bik\s+heb\s+(?:\w+\s+){0,3}?in\s+de\s+(?:gevangenis"
    r"|bak|cel)\s+gezeten|\bik\s+ben\s+(?:\w+\s+)?veroordeeld"
)

_ORIGIN: Final = re.compile(
    r"\b(?:soy|sou)\s+(?:de\s+)?(?:origen|origem|ascendencia|ascend[êe]ncia|etnia)\s+\w+"
    r"|\b(?:soy|sou)\s+(?:un\s+|una\s+)?(?:gitan[oa]|cigan[oa]|afrodescendiente|afrodescendente"
    r"|ind[íi]gena|mestiz[oa]|negr[oa]|mulat[oa])"
    + _END
    + r"|\bje\s+suis\s+(?:d'origine|d'ascendance)\s+\w+|\bje\s+suis\s+(?:une?\s+)?(?:noire?"
    r"|m[ée]tisse?|gitane?|rom|tsigane)"
    + _END
    + r"|\bsono\s+di\s+origine\s+\w+|\bsono\s+(?:un[oa]?\s+)?(?:ner[oa]|rom|sinti|zingar[oa])"
    + _END
    + r"|\bich\s+bin\s+(?:\w+\s+)?(?:herkunft|abstammung)\b|\bich\s+bin\s+(?:eine?\s+)?(?:sinti"
    r"|roma|schwarze[r]?)"
    + _END
    + r"|\bik\s+ben\s+van\s+\w+\s+(?:afkomst|origine)|\bik\s+ben\s+(?:een\s+)?(?:zwarte|roma|sinti)"
    + _END
)


# Every rule above starts with a first-person form of one of the six languages; a text with none
# (English, most of all) skips them.
_FIRST_PERSON: Final = re.compile(
    r"\b(?:soy|sou|sono|je|j'|ich|ik|yo|io|eu|vot[oóeéoaòi]\w*|milit\w*|apoyo|apoio|sostengo"
    r"|tengo|tenho|estuve|estive|fiquei|he|estoy|me|fui|ho|siempre|sempre)\b"
)


def politics_record_or_origin(sem: str) -> str | None:
    """What a first-person statement in one of the six languages discloses, or None."""
    if not _FIRST_PERSON.search(sem):
        return None
    if _POLITICS.search(sem):
        return "political opinion"
    if _RECORD.search(sem):
        return "criminal record"
    if _ORIGIN.search(sem):
        return "racial or ethnic origin"
    return None
