"""What a user message asks of long-term memory, read with plain patterns (no model).

* an explicit request — "remember that …", "please remember …", "from now on …", "don't forget
  …", "keep in mind that …" — is a *remember* intent: the user consents, the statement is saved;
* "forget that …", "forget my …", "forget about …" is a *forget* intent;
* a plain first-person statement of fact or preference — "I prefer …", "my name is …", "I live
  in …" — is at most a *proposal*: saved as proposed, never injected until the user confirms.

Each intent carries the statement, a category and a subject key. The subject key is what the
statement is about ("name", "seat", "language"), so a newer statement on the same subject can
supersede the older one; when no pattern names the subject, the statement itself is the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from convmem.model.memory import Category

IntentKind = Literal["remember", "forget", "propose"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_REMEMBER = re.compile(
    r"^\s*(?:(?:please|pls|hey|ok|okay|and|also)[,\s]+)*"
    r"(?:remember(?:\s+that)?|don'?t\s+forget(?:\s+that)?|do\s+not\s+forget(?:\s+that)?"
    r"|keep\s+in\s+mind(?:\s+that)?|note\s+that|from\s+now\s+on)[,:\s]+(?P<fact>.+)",
    re.IGNORECASE | re.DOTALL,
)
_FORGET = re.compile(
    r"^\s*(?:(?:please|pls|and|also)[,\s]+)*(?:forget|stop\s+remembering)"
    r"(?:\s+(?:that|about|what\s+i\s+said\s+about))?\s+(?P<fact>.+)",
    re.IGNORECASE | re.DOTALL,
)
_STATEMENT = re.compile(
    r"^\s*(?:i\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|enjoy|don'?t\s+like|usually|always|"
    r"never|live\s+in|work\s+(?:at|for|as)|am\s+(?:a|an)|'m\s+(?:a|an))\b"
    r"|i'm\s+(?:a|an)\b|my\s+\w+(?:\s+\w+)?\s+(?:is|are)\b|call\s+me\b)",
    re.IGNORECASE,
)

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "be",
        "my",
        "me",
        "i",
        "i'm",
        "im",
        "it",
        "that",
        "this",
        "please",
        "always",
        "never",
        "usually",
        "really",
        "very",
        "so",
        "as",
        "by",
        "from",
        "about",
    ]
)

# (pattern over the statement, category, subject) — the first that matches names the subject.
_SUBJECTS: list[tuple[re.Pattern[str], Category, str]] = [
    (re.compile(r"\b(?:my\s+name\s+is|call\s+me|i'?m\s+called)\b", re.I), "profile", "name"),
    (
        re.compile(r"\bi\s+(?:live|am\s+based|'m\s+based)\s+in\b|\bmy\s+(?:home|city)\b", re.I),
        "profile",
        "home",
    ),
    (
        re.compile(r"\bi\s+work\s+(?:at|for)\b|\bmy\s+(?:employer|company)\b", re.I),
        "profile",
        "employer",
    ),
    (re.compile(r"\bi\s+work\s+as\b|\bmy\s+(?:job|role|title)\b", re.I), "profile", "job"),
    (re.compile(r"\bmy\s+(?:birthday|date\s+of\s+birth)\b", re.I), "profile", "birthday"),
    (re.compile(r"\b(?:time\s*zone|timezone)\b", re.I), "profile", "timezone"),
    (re.compile(r"\b(?:seat|seats)\b", re.I), "preference", "seat"),
    (
        re.compile(
            r"\b(?:answer|reply|respond|write|speak)\w*\s+(?:in|with)\s+(?:english|german|"
            r"french|spanish|italian|portuguese|dutch|japanese|chinese)\b",
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
    (re.compile(r"\b(?:vegetarian|vegan|pescatarian|diet)\b", re.I), "preference", "diet"),
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
]
_MY_X_IS = re.compile(r"\bmy\s+(?:favou?rite\s+)?(?P<x>\w+(?:\s+\w+)?)\s+(?:is|are)\b", re.I)
_PREFERENCE_WORDS = re.compile(r"\b(?:prefer|like|love|hate|dislike|enjoy|want|rather)\b", re.I)
_CONSTRAINT_WORDS = re.compile(r"\b(?:never|always|must|don'?t|do\s+not|only|avoid)\b", re.I)


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    text: str
    category: Category
    subject_key: str


def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    return sentence[:500]


def content_words(text: str) -> list[str]:
    words = re.findall(r"[\w'-]+", text.lower())
    return [w for w in words if w not in _STOP and len(w) > 1]


def classify(statement: str) -> tuple[Category, str]:
    """Category and subject key of a statement."""
    for pattern, category, subject in _SUBJECTS:
        if pattern.search(statement):
            return category, subject
    match = _MY_X_IS.search(statement)
    if match:
        return "profile", " ".join(content_words(match.group("x"))) or match.group("x").lower()
    kind: Category = "fact"
    if _PREFERENCE_WORDS.search(statement):
        kind = "preference"
    elif _CONSTRAINT_WORDS.search(statement):
        kind = "constraint"
    return kind, " ".join(content_words(statement))[:200]


def detect_intent(message: str) -> Intent | None:
    """The memory intent of a user message, if any."""
    text = message.strip()
    remember = _REMEMBER.match(text)
    if remember:
        fact = _first_sentence(remember.group("fact"))
        if content_words(fact):
            category, subject = classify(fact)
            return Intent("remember", fact, category, subject)
    forget = _FORGET.match(text)
    if forget:
        fact = _first_sentence(forget.group("fact"))
        if content_words(fact):
            category, subject = classify(fact)
            return Intent("forget", fact, category, subject)
    if _STATEMENT.match(text):
        fact = _first_sentence(text)
        category, subject = classify(fact)
        return Intent("propose", fact, category, subject)
    return None


def _stem(word: str) -> str:
    return word[:5]


def matches_forget(request: str, subject_key: str, memory_text: str) -> bool:
    """Whether a memory is what a forget request names: most of the request's content words
    (compared by their first five letters, a cheap stem) occur in the memory or its subject."""
    wanted = {_stem(w) for w in content_words(request)} - {"forge"}
    if not wanted:
        return False
    have = {_stem(w) for w in content_words(memory_text + " " + subject_key)}
    return len(wanted & have) / len(wanted) >= 0.6
