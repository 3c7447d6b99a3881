"""The deterministic entity extractor: the names a turn mentions and the sentences about them.

Read by patterns, no model: capitalised words and phrases (not a sentence's ordinary first word,
pronouns, weekdays or months), ``@handles``, quoted titles in the common quote styles, "my
<relation> <Name>" in the languages of :mod:`convmem.memory.phrases`, stated nicknames ("Caroline
(Caro)", "Robert, aka Bob", "we call her Caro"), and the turn's speaker when the message names one
(its ``name`` metadata): the speaker's first-person sentences are facts about them.

In a sentence written in capitals ("CALL JON NOW"), a capital marks nothing: each capitalised
word there is weak. In a text written in a language
that capitalises every noun (German), a lone capitalised word
is a noun as often as a name and is weak wherever it stands; names still come in by the
patterns above, by cue ("aus Berlin", "mit Lena") and as runs of several words ("Thomas Müller").

A capitalised word that opens a sentence is ambiguous ("Yesterday", "Caroline") and is returned as
a *weak* mention: it is kept only for an entity the user's conversations already know
(``convmem.entities.derive``). So is the first word of a run of capitalised words that opens a
sentence ("Remember Jon", "Woohoo Melanie", but "Grand Canyon"): the run is returned with its
rest as an ``opening`` alternative, which the derivation takes instead when only the rest is a
known name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from convmem.entities import names
from convmem.entities.names import is_name_word, name_key
from convmem.memory.phrases import LANGUAGES
from convmem.memory.slots import word_set
from convmem.model.entities import EntityType, Mention

MAX_FACT_CHARS = 400
MAX_NAME_CHARS = 80
MAX_TITLE_WORDS = 8
EXTRACTOR = "rules-v1"

_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)", re.M)
_POSSESSIVE_END = re.compile(r"(?<=\w)['’]s$")
_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.U)
_CONNECTORS = word_set("of de da del della di du van von der den la le y")
_HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z0-9_][A-Za-z0-9_.-]{1,29})(?![\w@])")
_QUOTES = (
    re.compile(r'(?<![\w"])"([^"\n]{2,120})"(?![\w"])'),
    re.compile(r"“([^”\n]{2,120})”"),
    re.compile(r"«\s?([^»\n]{2,120}?)\s?»"),
    re.compile(r"„([^“”\n]{2,120})[“”]"),
    re.compile(r"「([^」\n]{1,120})」"),
    re.compile(r"『([^』\n]{1,120})』"),
    re.compile(r"‘([^’\n]{2,120})’"),
    re.compile(r"(?<![\w'])'([^'\n]{2,120})'(?![\w'])"),
)
_POSSESSIVES = "|".join(lang.possessive for lang in LANGUAGES)
_RELATIONS = "|".join(
    re.escape(w) for w in sorted(names.PERSON_RELATIONS | names.ANIMAL_RELATIONS, key=len)[::-1]
)
_CAP = r"[^\W\d_a-zß-ÿ][\w'’-]*"
_NAME = rf"{_CAP}(?:\s+{_CAP}){{0,2}}"
# case-insensitive around the name only: the name itself must be capitalised
_RELATION = re.compile(
    rf"(?i:\b(?:{_POSSESSIVES})\s+(?:(?:\w+)\s+)?(?P<rel>{_RELATIONS})\s*,?\s*"
    rf"(?:(?:{names.NAMING_WORDS})\s+)?)(?P<name>{_NAME})"
)
_NICKNAME = re.compile(
    rf"(?P<name>{_NAME})\s*(?:\(\s*(?:(?:{names.NICKNAME_WORDS})\s+)?[\"“'«]?(?P<nick1>{_CAP})"
    rf"[\"”'»]?\s*\)|,?\s+(?:{names.NICKNAME_WORDS})\s+[\"“'«]?(?P<nick2>{_CAP}))"
)
_CALLED = re.compile(rf"(?i:\b{names.CALL_NICKNAME}\s+)[\"“'«]?(?P<nick>{_CAP})")
_FIRST_PERSON = re.compile(
    r"(?<!\w)(?:" + "|".join(lang.first_person for lang in LANGUAGES) + r")(?!\w)", re.I
)


@dataclass
class _Found:
    name: str
    type: EntityType
    confidence: float
    weak: bool = False
    aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Extraction:
    """A turn's mentions: ``strong`` ones are kept, ``weak`` ones only for known entities."""

    strong: tuple[Mention, ...]
    weak: tuple[Mention, ...]
    # a sentence-opening run's name key -> the run without its first word ("go jon" -> "Jon")
    opening: Mapping[str, str] = field(default_factory=dict)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _clip(sentence: str) -> str:
    return sentence if len(sentence) <= MAX_FACT_CHARS else sentence[: MAX_FACT_CHARS - 1] + "…"


def _type_of_phrase(sentence: str, start: int, end: int, phrase: str) -> EntityType:
    words = [name_key(w) for w in phrase.split()]
    # "Project Apollo", "Acme Inc", "Central Park"; a lone "Park" or "Bank" is the noun
    if len(words) > 1 and words[0] in names.PROJECT_WORDS:
        return "project"
    if len(words) > 1 and words[-1] in names.ORGANISATION_WORDS:
        return "organisation"
    if len(words) > 1 and words[-1] in names.PLACE_WORDS:
        return "place"
    before, after = sentence[:start], sentence[end:]
    if names.PLACE_CUE.search(before):
        return "place"
    if names.PERSON_CUE_BEFORE.search(before) or names.PERSON_CUE_AFTER.match(after):
        return "person"
    return "thing"


def _capitalised(sentence: str) -> list[tuple[str, int, int, bool, str | None]]:
    """Runs of name words (joined by connectors like "of"), with their span, whether the run is
    one word that opens the sentence, and for a longer run that opens it, the run without its
    first word."""
    runs: list[tuple[str, int, int, bool, str | None]] = []
    words = list(_WORD.finditer(sentence))
    i = 0
    first_word = True
    while i < len(words):
        word = words[i].group().rstrip(".'’-")
        if not is_name_word(word):
            i += 1
            first_word = False
            continue
        start, end, j = words[i].start(), words[i].start() + len(word), i + 1
        opens = first_word or not sentence[: words[i].start()].strip(" \"'“‘(«-–—*")
        while j < len(words):
            gap = sentence[end : words[j].start()]
            nxt = words[j].group().rstrip(".'’-")
            if gap.strip() == "" and is_name_word(nxt):
                end = words[j].start() + len(nxt)
                j += 1
            elif (
                gap.strip() == ""
                and nxt.lower() in _CONNECTORS
                and j + 1 < len(words)
                and is_name_word(words[j + 1].group().rstrip(".'’-"))
                and sentence[words[j].end() : words[j + 1].start()].strip() == ""
            ):
                nxt2 = words[j + 1].group().rstrip(".'’-")
                end = words[j + 1].start() + len(nxt2)
                j += 2
            else:
                break
        if opens and j - i > 1 and name_key(words[i].group()) in names.SENTENCE_OPENERS:
            i += 1  # "Contact Ana Lopez": the name starts at the next word
            start = words[i].start()
            opens = False
        phrase = sentence[start:end]
        rest = None
        if opens and j - i > 1:
            rest = sentence[words[i + 1].start() : end]
            if name_key(rest) in _CONNECTORS or not is_name_word(rest.split()[0]):
                rest = None  # "Bank of America" stays whole
        if len(phrase) <= MAX_NAME_CHARS and len(name_key(phrase)) > 1:
            runs.append((phrase, start, end, opens and j - i == 1, rest))
        i = j
        first_word = False
    return runs


def _capitals_say_nothing(sentence: str) -> bool:
    """A sentence of two words or more written in capitals: there a capital marks no name, so
    every capitalised word is weak (an acronym among lower-case words is not affected)."""
    letters = [c for c in sentence if c.isalpha()]
    cased = [c for c in letters if c.isupper() or c.islower()]  # scripts without case: no
    return len(_WORD.findall(sentence)) >= 2 and bool(cased) and all(c.isupper() for c in cased)


def extract(text: str, speaker: str | None = None) -> Extraction:
    """The entities ``text`` mentions. ``speaker``: the name the message was written under."""
    found: dict[str, _Found] = {}
    facts: dict[str, dict[str, float]] = {}
    opening: dict[str, str] = {}
    nouns_capitalised = names.capitalises_nouns(text)

    def note(
        name: str, kind: EntityType, confidence: float, sentence: str, weak: bool = False
    ) -> str:
        name = _POSSESSIVE_END.sub("", name.strip(" ,;:'\"’"))  # "Oliver's" names Oliver
        key = name_key(name)
        if not key or len(name) > MAX_NAME_CHARS:
            return ""
        item = found.get(key)
        if item is None:
            found[key] = _Found(name, kind, confidence, weak)
        else:
            item.weak = item.weak and weak
            if item.type == "thing" and kind != "thing":
                item.type = kind
            item.confidence = max(item.confidence, confidence)
        per = facts.setdefault(key, {})
        clipped = _clip(sentence)
        per[clipped] = max(per.get(clipped, 0.0), confidence)
        return key

    for sentence in sentences(text):
        taken: list[tuple[int, int]] = []
        capitals_say_nothing = _capitals_say_nothing(sentence)
        for match in _RELATION.finditer(sentence):
            relation = match.group("rel").lower()
            candidate = match.group("name")
            kept = [w for w in candidate.split() if is_name_word(w)]
            if capitals_say_nothing:  # "MY SISTER ANA MOVED": the name is one word
                kept = kept[:1]
            if not kept or not is_name_word(candidate.split()[0]):
                continue
            person = " ".join(candidate.split()[: len(kept)])
            kind: EntityType = "animal" if relation in names.ANIMAL_RELATIONS else "person"
            key = note(person, kind, 0.9, sentence)
            if key:
                # "my sister", "meine Schwester": the user's own way to name them
                said = sentence[match.start() : match.end("rel")]
                found[key].aliases.append(" ".join(said.lower().split()))
                taken.append(match.span("name"))
        for match in _HANDLE.finditer(sentence):
            note("@" + match.group(1), "person", 0.8, sentence)
            taken.append(match.span())
        for pattern in _QUOTES:
            for match in pattern.finditer(sentence):
                title = match.group(1).strip()
                if 0 < len(title.split()) <= MAX_TITLE_WORDS and not title.endswith((",", ";")):
                    note(title, "work", 0.7, sentence)
                    taken.append(match.span())
        for match in _NICKNAME.finditer(sentence):
            nick = match.group("nick1") or match.group("nick2")
            full = match.group("name")
            if is_name_word(full.split()[0]) and is_name_word(nick):
                key = note(full, "person", 0.8, sentence)
                if key:
                    found[key].aliases.append(nick)
                    taken.append(match.span())
        if capitals_say_nothing:  # "CALL JON NOW": only names already known
            for word in _WORD.finditer(sentence):
                name = word.group().rstrip(".'’-")
                span = (word.start(), word.start() + len(name))
                if is_name_word(name) and not any(span[0] < e and s < span[1] for s, e in taken):
                    note(name, _type_of_phrase(sentence, *span, name), 0.5, sentence, weak=True)
            continue
        for phrase, start, end, opens, rest in _capitalised(sentence):
            if any(start < e and s < end for s, e in taken):
                continue
            kind = _type_of_phrase(sentence, start, end, phrase)
            multi = " " in phrase
            # a lone capitalised word that opens the sentence, or any in German, may be a noun
            ambiguous = (opens or nouns_capitalised) and not multi and kind == "thing"
            key = note(phrase, kind, 0.6 if multi or kind != "thing" else 0.5, sentence, ambiguous)
            if key and rest:
                opening[key] = _POSSESSIVE_END.sub("", rest)
        called = _CALLED.search(sentence)
        if called:
            people = [f for f in found.values() if f.type == "person"]
            if people:
                people[-1].aliases.append(called.group("nick"))
    if speaker:
        own = [s for s in sentences(text) if _FIRST_PERSON.search(s)]
        if own:
            key = note(speaker, "person", 0.6, own[0])
            for sentence in own[1:]:
                facts[key][_clip(sentence)] = 0.6
    # a name stated as another's nickname is that entity: its sentences go there
    for key, item in list(found.items()):
        for alias in item.aliases:
            other = name_key(alias)
            if other != key and other in found and other not in ("",):
                for sentence, confidence in facts.pop(other, {}).items():
                    facts[key][sentence] = max(facts[key].get(sentence, 0.0), confidence)
                found.pop(other)
    strong: list[Mention] = []
    weak: list[Mention] = []
    for key, item in found.items():
        aliases = tuple(dict.fromkeys(a for a in item.aliases if name_key(a) != key))
        mention = Mention(item.name, item.type, aliases, tuple(facts[key].items()))
        (weak if item.weak else strong).append(mention)
    strong_keys = {name_key(m.name) for m in strong}
    rests = {k: v for k, v in opening.items() if k in strong_keys}
    return Extraction(tuple(strong), tuple(weak), rests)
