"""Slots: what a statement is about and, for a slot with a value ("seat": aisle, "home": Porto),
the value it gives — the subject keys memories are filed under, the only kind of subject on which a
newer statement may supersede an older one, and what the current-turn check compares.

Read by patterns in the languages of :mod:`convmem.memory.phrases` (no model); the request grammar
that decides whether a message asks anything of memory is :mod:`convmem.memory.intent`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

from convmem.memory.phrases import LANGUAGES
from convmem.model.memory import Category


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOP = word_set(
    "a an the to of for in on at with and or but is are was be my me i i'm im it that this "
    "please always never usually really very so as by from about"
)

# (pattern over the statement, category, subject) — the first that matches names a slot. Each
# pattern needs the value, not only the topic: "aisle seats" is a seat preference, "we talked
# about seats" is not.
# Where a clause opens, for a habit said with a pro-drop verb ("bebo café"): its start, after
# at most a subject pronoun, a negation and a time adverb.
_CLAUSE_START = (
    r"\W*(?:(?:yo|eu|io|no|não|non|ya|ahora|agora|ora|adesso|now|jetzt|nu|maintenant)\s+)*"
)
# What may stand between "I" and a habit's verb: negation and frequency, not another verb
# ("I think I eat too much" says nothing of a habit).
_HABIT_ADVERBS = (
    r"(?:(?:don'?t|do\s+not|no\s+longer|never|usually|always|only|now|mostly|mainly|also|"
    r"just|rarely|often|still|generally|normally|typically|mainly)\s+){0,2}"
)
_SUBJECTS: list[tuple[re.Pattern[str], Category, str]] = [
    (
        re.compile(
            r"\b(?:my\s+name\s+is|call\s+me|i'?m\s+called|ich\s+heiße|mein\s+name\s+ist|"
            r"nenn\s+mich|je\s+m'appelle|mon\s+nom\s+est|appelle-moi|me\s+llamo|"
            r"mi\s+nombre\s+es|llámame|mi\s+chiamo|il\s+mio\s+nome\s+è|chiamami|me\s+chamo|"
            r"meu\s+nome\s+é|me\s+chame|ik\s+heet|mijn\s+naam\s+is|noem\s+me)\b",
            re.I,
        ),
        "profile",
        "name",
    ),
    (
        re.compile(
            r"\bi\s+(?:now\s+|currently\s+)?(?:live|am\s+based|'m\s+based)\s+in\b|"
            r"\bi'?m\s+(?:now\s+)?based\s+in\b|\bmy\s+(?:home\s+city|city|home)\s+is\b|"
            r"\bi\s+(?:have\s+|'ve\s+|just\s+|recently\s+)*(?:moved|relocated)\s+to\b|"
            r"\bich\s+(?:wohne|lebe)\s+(?:jetzt\s+|nun\s+|seit\s+\w+\s+|inzwischen\s+)?in\b|"
            r"\bich\s+bin\s+(?:jetzt\s+|gerade\s+|vor\s+\w+\s+\w+\s+)?nach\b(?=.*\bgezogen\b)|"
            r"\bj'habite\b|\bje\s+vis\s+(?:maintenant\s+)?(?:à|en)\b|"
            r"\bje\s+(?:me\s+suis\s+installée?|suis\s+(?:partie?|allée?)\s+vivre|"
            r"viens\s+de\s+déménager|(?:ai\s+)?déménagée?)\s+(?:à|en|au)\b|"
            r"\bvivo\s+(?:ahora\s+|agora\s+|ora\s+|adesso\s+)?(?:en|a|em|no|na)\b|"
            r"\babito\s+(?:ora\s+|adesso\s+)?a\b|\bmoro\s+(?:agora\s+)?(?:em|no|na)\b|"
            r"\bme\s+(?:he\s+)?(?:mudé|mudado)\s+a\b|\bmi\s+sono\s+trasferit[oa]\s+a\b|"
            r"\b(?:me\s+)?mudei(?:-me)?\s+para\b|\bik\s+woon\s+(?:nu\s+|sinds\s+\w+\s+)?in\b|"
            r"\bik\s+ben\s+(?:net\s+|onlangs\s+)?naar\b(?=.*\bverhuisd\b)",
            re.I,
        ),
        "profile",
        "home",
    ),
    (
        re.compile(r"\bi\s+work\s+(?:at|for)\b|\bmy\s+(?:employer|company)\s+is\b", re.I),
        "profile",
        "employer",
    ),
    (re.compile(r"\bi\s+work\s+as\b|\bmy\s+(?:job|role|title)\s+is\b", re.I), "profile", "job"),
    (re.compile(r"\bmy\s+(?:birthday|date\s+of\s+birth)\s+is\b", re.I), "profile", "birthday"),
    (re.compile(r"\b(?:time\s*zone|timezone)\s+is\b", re.I), "profile", "timezone"),
    (
        re.compile(
            r"\b(?:aisle|window|middle|exit[- ]row)\s+seats?\b|gangpl[aä]tz|côté\s+couloir|"
            r"asientos?\s+de\s+pasillo|posti\s+corridoio|assentos?\s+no\s+corredor|gangpadstoel",
            re.I,
        ),
        "preference",
        "seat",
    ),
    (
        re.compile(
            r"\b(?:answer|reply|respond|write|speak)\w*\s+(?:in|with)\s+(?:english|german|"
            r"french|spanish|italian|portuguese|dutch|japanese|chinese)\b|"
            r"\bantworte\w*\s+(?:auf|in)\b|\bréponds\s+en\b|\bresp[oó]nde\w*\s+en\b|"
            r"\brispondi\s+in\b|\bresponda\s+em\b|\bantwoord\s+in\b",
            re.I,
        ),
        "preference",
        "language",
    ),
    (
        re.compile(
            r"\b(?:python|typescript|javascript|java|rust|go|ruby|kotlin|swift)\s+"
            r"(?:examples?|code)\b",
            re.I,
        ),
        "preference",
        "code examples",
    ),
    (
        re.compile(
            r"\b(?:vegetarian|vegan|pescatarian|vegetarier\w*|veganer\w*|végétarien\w*|"
            r"végan\w*|vegetarian[oa]|vegan[oa]|vegetariër|veganist)\b",
            re.I,
        ),
        "preference",
        "diet",
    ),
    (re.compile(r"\b(?:metric|imperial|celsius|fahrenheit)\b", re.I), "preference", "units"),
    (
        re.compile(
            r"\b(?:concise|brief|short|detailed|verbose|long)\s+(?:answers?|replies|"
            r"responses?)\b",
            re.I,
        ),
        "preference",
        "answer length",
    ),
    # Habits with one value at a time as a person says them ("I drink tea"): a different value
    # may be a change or a second habit, so it is asked about, never replaced unasked.
    (
        re.compile(
            rf"^{_CLAUSE_START}(?:i\s+{_HABIT_ADVERBS}drink|ich\s+trinke|je\s+(?:ne\s+)?bois|"
            r"bebo|bevo|ik\s+drink)\b",
            re.I,
        ),
        "preference",
        "drink",
    ),
    (
        re.compile(
            rf"^{_CLAUSE_START}(?:i\s+{_HABIT_ADVERBS}eat|ich\s+esse|je\s+(?:ne\s+)?mange|"
            r"como|mangio|ik\s+eet)\b",
            re.I,
        ),
        "preference",
        "eat",
    ),
    (
        re.compile(
            rf"^{_CLAUSE_START}(?:i\s+{_HABIT_ADVERBS}drive|ich\s+fahre|je\s+(?:ne\s+)?conduis|"
            r"conduzco|manejo|guido|conduzo|dirijo|ik\s+rijd)\b",
            re.I,
        ),
        "preference",
        "drive",
    ),
]
# Slots a different value may join rather than replace: a change to one is asked about.
HABIT_SLOTS = frozenset({"drink", "eat", "drive"})
_MY_X_IS = re.compile(r"\bmy\s+(?:favou?rite\s+)?(?P<x>\w+(?:\s+\w+)?)\s+(?:is|are)\s+\w", re.I)
# The same slot in the grammar's other languages: a first-person possessive and the slot's noun
# (one or two words), then the copula before the value ("mon plat préféré est la raclette",
# "meine Lieblingsfarbe ist Blau") or, in a German or Dutch clause after "dass" / "dat", after it
# at the clause's end ("meine Lieblingsfarbe Gelb ist", "mijn favoriete kaas Gouda is").
_OTHER_POSSESSIVES = "|".join(lang.possessive for lang in LANGUAGES if lang.code != "en")
_VERB_FINAL_POSSESSIVES = "|".join(
    lang.possessive for lang in LANGUAGES if lang.code in ("de", "nl")
)
_THEIR_X_IS = re.compile(
    rf"\b(?:{_OTHER_POSSESSIVES})\s+(?P<x>\w+(?:\s+\w+)?)\s+"
    r"(?:ist|sind|est|sont|es|son|è|sono|é|são|is|zijn)\s+\w",
    re.I,
)
_THEIR_X_VALUE_IS = re.compile(
    rf"\b(?:{_VERB_FINAL_POSSESSIVES})\s+(?P<x>\w+(?:\s+\w+)?)\s+\w+\s+(?:ist|sind|is|zijn)"
    r"\s*[.!]?\s*$",
    re.I,
)
_PREFERENCE_WORDS = re.compile(r"\b(?:prefer|like|love|hate|dislike|enjoy|want|rather)\b", re.I)
_CONSTRAINT_WORDS = re.compile(r"\b(?:never|always|must|don'?t|do\s+not|only|avoid)\b", re.I)


def content_words(text: str) -> list[str]:
    words = re.findall(r"[\w'-]+", text.lower())
    return [w for w in words if w not in _STOP and len(w) > 1]


def subject_slot(statement: str) -> tuple[Category, str] | None:
    """The slot a statement gives a value for, if it names one."""
    if statement.rstrip().endswith("?"):
        return None
    found = _slot_match(statement)
    if found is None:
        return None
    category, subject, _ = found
    return category, subject


def _slot_match(
    statement: str, among: Collection[str] | None = None
) -> tuple[Category, str, re.Match[str]] | None:
    """The slot a statement names: (category, subject key, where it was named). With
    ``among``, only those slots are looked for (fewer patterns run), so a statement naming
    another slot first still gives one of them."""
    for pattern, category, subject in _SUBJECTS:
        if among is not None and subject not in among:
            continue
        match = pattern.search(statement)
        if match:
            return category, subject, match
    if among is not None:
        # a "my X is" slot's key is the words of X: a statement without them cannot name it
        lowered = statement.lower()
        if not any(s.split()[0] in lowered for s in among if s not in _NAMED_SUBJECTS):
            return None
    match = (
        _MY_X_IS.search(statement)
        or _THEIR_X_IS.search(statement)
        or _THEIR_X_VALUE_IS.search(statement)
    )
    if match:
        x = match.group("x")
        subject = " ".join(content_words(x)) or x.lower()
        if among is None or subject in among:
            return "profile", subject, match
    return None


def classify(statement: str) -> tuple[Category, str]:
    """Category and subject key of a statement: its slot, else the statement's own words."""
    slot = subject_slot(statement)
    if slot is not None:
        return slot
    kind: Category = "fact"
    if _PREFERENCE_WORDS.search(statement):
        kind = "preference"
    elif _CONSTRAINT_WORDS.search(statement):
        kind = "constraint"
    return kind, " ".join(content_words(statement))[:200]


def stem(word: str) -> str:
    return word[:5]


# --- a slot's value -----------------------------------------------------------------------------

_NAMED_SUBJECTS = frozenset(subject for _, _, subject in _SUBJECTS)
# Slots whose pattern holds the value itself ("aisle seats", "vegan"); the others name the slot
# and the value follows ("my name is" Ana).
_VALUE_IN_MATCH = frozenset({"seat", "language", "code examples", "diet", "units", "answer length"})
# Where a value ends: a clause break, or "and"/"but" in one of the grammar's languages.
_VALUE_END = re.compile(
    r"[,;:.!?()]|\s(?:and|but|und|aber|et|mais|y|pero|e|ma|mas|en|maar)\s", re.IGNORECASE
)
# Words around a value that are not part of it: copulas and possessives of the languages.
_FRAME = word_set(
    "ist sind est sont es son è sono é são is zijn mein meine mon ma mes mi mis "
    "der die das ein eine le la les un une el los las una il lo gli os as um uma het een "
    # time and the verbs of a move: when the value changed, not what it is
    "now nowadays currently recently just last month year week ago since jetzt nun seit "
    "inzwischen mittlerweile letzten letzte monat jahr woche gezogen umgezogen maintenant "
    "depuis mois dernier dernière année ahora desde mes año pasado adesso ora da mese anno "
    "scorso agora mês ano passado nu sinds vorige maand jaar verhuisd "
    # negations: kept apart, as a value's polarity
    "not don't doesn't never no longer anymore any more nicht kein keine keinen mehr ne pas "
    "plus non più não niet geen meer nunca jamais mai"
)
_NEGATION = re.compile(
    r"(?<![\w'])(?:not|don'?t|doesn'?t|never|no\s+longer|nicht|kein\w*|ne|n'|pas|plus|non|"
    r"não|niet|geen|nunca|jamais|mai|ya\s+no|no)(?![\w'])",
    re.IGNORECASE,
)
# Words that say a statement moves a slot ("I moved to", "now", "since", "no longer"), in every
# language of the grammar.
_NEWER = re.compile(
    r"(?<![\w'])(?:" + "|".join(lang.newer for lang in LANGUAGES) + r")(?![\w'])",
    re.IGNORECASE,
)


def replaces(statement: str, older: str, subject: str) -> bool:
    """Whether the user's ``statement`` on a slot replaces their ``older`` one without asking:
    it says the same value (a restatement), says it is newer ("I moved to", "now", "no longer"),
    or gives a slot that holds one value at a time (a name, a home, a favourite) another one. A
    habit given another value ("I drink coffee" after "I drink tea") may be a second habit, so
    that is asked about. Texts whose values cannot be read replace, as a named subject did."""
    new = slot_value(statement, (subject,))
    old = slot_value(older, (subject,))
    if new is None or old is None or new.agrees_with(old) or moves_slot(statement):
        return True
    return subject not in HABIT_SLOTS


def moves_slot(statement: str) -> bool:
    """Whether a statement says its value is new ("I moved to Faro", "ich wohne jetzt in Köln",
    "no longer"), not merely another value beside the one kept."""
    return _NEWER.search(statement) is not None


@dataclass(frozen=True)
class SlotValue:
    """What a statement says a slot holds: the slot and the value's words (compared by their
    first five letters, the stem ``matches_forget`` uses, without accents)."""

    subject: str
    value: frozenset[str]
    negated: bool = False  # "I don't drink coffee": the value is said not to hold
    words: frozenset[str] = frozenset()  # the value's whole words, lower case, accents dropped

    def agrees_with(self, other: SlotValue) -> bool:
        """Whether two statements about one slot give the same value: either's value words are
        all in the other's ("my home city is Porto" and "I live in Porto now" agree; "my home
        city is Lisbon" and "mi chiamo Luca, non Marco" do not), with the same polarity."""
        if self.negated != other.negated:
            return False
        return self.value <= other.value or other.value <= self.value


def content_stems(text: str) -> frozenset[str]:
    """Content words by their stems, accents dropped ("végétarien" and "vegetarian" agree)."""
    return _stems(text)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _value_words(text))


def _value_words(text: str) -> frozenset[str]:
    # content words first, accents dropped after: "thé" is a value, "the" an article
    bare = (
        "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
        for w in content_words(text)
    )
    return frozenset(w for w in bare if w not in _FRAME)


def slot_value(statement: str, among: Collection[str] | None = None) -> SlotValue | None:
    """The slot a statement gives a value for (one of ``among``, when given), with the value;
    None for a question, a statement that names no slot, or one without a value."""
    if statement.rstrip().endswith("?"):
        return None
    found = _slot_match(statement, among)
    if found is None:
        return None
    _, subject, match = found
    if subject in _VALUE_IN_MATCH:
        start, after = match.start(), match.end()
    elif match.re is _THEIR_X_VALUE_IS:  # "… meine Lieblingsfarbe Gelb ist": V before the verb
        start, after = match.end("x"), match.end()
    elif "x" in match.re.groupindex:  # "my X is V…": the match ends one letter into V
        start = after = match.end() - 1
    else:
        start = after = match.end()
    end = _VALUE_END.search(statement, after)
    said = statement[start : end.start() if end else len(statement)]
    whole = _value_words(said)
    if "x" in match.re.groupindex:
        whole -= _value_words(match.group("x"))
    if not whole:
        return None
    negated = subject in HABIT_SLOTS and _NEGATION.search(match.group(0) + " " + said) is not None
    return SlotValue(subject, frozenset(stem(w) for w in whole), negated, whole)
