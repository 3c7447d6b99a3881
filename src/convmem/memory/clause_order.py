"""A German or Dutch subordinate clause as the main clause a person would write on its own.

After "dass" / "dat" the finite verb goes to the end: "Merk dir, dass ich jetzt in Köln wohne"
holds the clause "ich jetzt in Köln wohne", which kept as a memory reads as a fragment. A main
clause puts the finite verb second, after the subject: "Ich wohne jetzt in Köln." This module
makes that move by grammar, not by a list of sentences:

* the **subject** is the clause's first-person pronoun ("ich", "ik", "wir", "we") or a noun
  phrase opened by a first-person possessive: the possessive, its attributive adjectives (lower
  case in German; ending in -e in Dutch), the noun, and a name in apposition when more words
  follow ("mein Bruder Paul in Köln wohnt");
* the **finite verb** is in the clause's final verb cluster: a known auxiliary or modal there
  ("gezogen bin", "kan eten", "ben verhuisd"), else the last word;
* a **separable prefix** glued to a final verb ("aufstehe", "opsta") is split off and left at
  the end ("Ich stehe früh auf") when what remains is a verb of the lexicon; anything after the
  clause's first comma (another clause) stays where it was.

A clause whose subject or verb cannot be found this way is returned unchanged (None), so the
caller can keep the user's own sentence rather than guess.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.slots import word_set

_SUBJECT_PRONOUN: Final = {"de": ("ich", "wir"), "nl": ("ik", "wij", "we")}
_POSSESSIVE: Final = {
    "de": ("mein", "meine", "meinen", "meinem", "meiner", "meines", "unser", "unsere"),
    "nl": ("mijn", "ons", "onze"),
}
# Finite auxiliaries and modals: in a final cluster ("nach Berlin gezogen bin", "naar Gent ben
# verhuisd") the one of these is the finite verb.
_FINITE_AUX: Final = {
    "de": word_set(
        "bin bist ist sind seid habe hast hat haben habt werde wirst wird werden kann kannst "
        "können muss musst müssen will willst wollen darf darfst dürfen soll sollst sollen möchte "
        "möchtest möchten mag magst mögen war waren hatte hatten wurde wurden konnte musste "
        "wollte durfte sollte"
    ),
    "nl": word_set(
        "ben bent is zijn heb hebt heeft hebben word wordt worden zal zult zullen kan kunt kunnen "
        "moet moeten wil wilt willen mag mogen ga gaat gaan was waren had hadden werd kon moest "
        "wilde wou mocht"
    ),
}
_SEPARABLE: Final = {
    "de": (
        "zurück",
        "fest",
        "weg",
        "auf",
        "aus",
        "ein",
        "mit",
        "nach",
        "vor",
        "los",
        "an",
        "ab",
        "zu",
        "her",
        "hin",
    ),
    "nl": ("terug", "mee", "op", "uit", "aan", "af", "in", "na", "weg", "toe", "over"),
}
# Verbs a separable prefix may be split from, in their first-person forms (the rest of such a
# word is not split: "antworte" is no "an" + "tworte").
_SPLIT_VERBS: Final = {
    "de": word_set(
        "stehe kaufe rufe sehe komme fange höre gebe nehme bringe ziehe fahre gehe lege stelle "
        "mache halte schaue passe melde spiele räume wache arbeite steige trete lade probiere setze"
    ),
    "nl": word_set(
        "sta koop bel kijk kom vang geef neem breng trek ga leg zet maak houd pas speel ruim werk "
        "stap nodig"
    ),
}
_WORD: Final = re.compile(r"\S+")
# A contrast that follows the verb-final clause without a comma ("… woon maar in Luik")
_CONTRAST: Final = re.compile(r"\s(?:maar|aber|sondern|doch)\s", re.IGNORECASE)


def _subject_end(lang: str, words: list[str]) -> int | None:
    """How many words the clause's subject takes, or None when it opens with none."""
    first = words[0].lower()
    if first in _SUBJECT_PRONOUN[lang]:
        return 1
    if first not in _POSSESSIVE[lang]:
        return None
    i = 1
    while i < len(words) - 2 and _attributive(lang, words[i]):
        i += 1
    if i >= len(words) - 1:
        return None
    end = i + 1  # the noun
    # a name in apposition ("mein Bruder Paul"), when words are left between it and the verb
    if end < len(words) - 2 and words[end][:1].isupper() and words[end][1:].islower():
        end += 1
    return end


def _attributive(lang: str, word: str) -> bool:
    if lang == "de":
        return word[:1].islower()  # German nouns are capitalised, adjectives before them not
    return word.lower().endswith("e") and len(word) > 3  # Dutch: "favoriete", "oudere"


def _split_off_prefix(lang: str, verb: str) -> tuple[str, str] | None:
    lowered = verb.lower()
    for prefix in _SEPARABLE[lang]:
        rest = lowered[len(prefix) :]
        if lowered.startswith(prefix) and rest in _SPLIT_VERBS[lang]:
            return verb[len(prefix) :], verb[: len(prefix)]
    return None


def main_clause(lang: str, clause: str) -> str | None:
    """``clause`` (a verb-final subordinate clause of ``lang``, "de" or "nl") in main-clause
    order, capitalised and ended with a full stop; None when its shape is not one this reads."""
    if lang not in _SUBJECT_PRONOUN:
        return None
    body, comma, tail = clause.strip().partition(",")
    after = f", {tail.strip()}" if comma else ""  # another clause after a comma stays as it is
    contrast = _CONTRAST.search(body)  # "… niet meer woon maar in Luik": the clause ends first
    if contrast:
        body, after = body[: contrast.start()], " " + body[contrast.start() :].strip() + after
    end_mark = re.search(r"[.!]+\s*$", body)
    if end_mark:
        body = body[: end_mark.start()]
    words = _WORD.findall(body)
    if len(words) < 2:
        return None
    subject = _subject_end(lang, words)
    if subject is None or subject >= len(words):
        return None
    rest = words[subject:]
    cluster = range(max(0, len(rest) - 3), len(rest))
    finite = next((i for i in reversed(cluster) if rest[i].lower() in _FINITE_AUX[lang]), None)
    index = len(rest) - 1 if finite is None else finite
    verb = rest.pop(index)
    if not re.fullmatch(r"[^\W\d_]+", verb) or verb[:1].isupper():
        return None  # a verb is lower case: "…, dass ich wohne in Köln" is no verb-final clause
    split = _split_off_prefix(lang, verb) if finite is None else None
    if split is not None:
        verb, prefix = split
        rest.append(prefix)
    ordered = " ".join([*words[:subject], verb, *rest])
    ordered = ordered[0].upper() + ordered[1:]
    ordered += after.rstrip().rstrip(".!")
    return ordered + "."
