"""Text helpers shared by the summarizers: sentences, significant words, verbatim literals."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(\[*])")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_WORD = re.compile(r"[a-z][a-z0-9'-]*")

# Numbers (with their separators: 1,800 · 09:40 · 3.5 · 2024-05-14) and identifiers (anything
# mixing letters with digits, underscores, dots or inner capitals: LH1234, user_id, eu-west-1,
# v1.2.3, getUserById), plus inline code spans. These must survive summarisation verbatim.
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/-]\d+)*")
_IDENTIFIER = re.compile(r"\b[A-Za-z_][\w.-]*(?:\d|_|[a-z][A-Z])[\w.-]*\b")

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing don't down during each few for
    from further had has have having he her here hers herself him himself his how i i'd i'll i'm
    i've if in into is it it's its itself just let let's me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than
    that that's the their theirs them themselves then there these they this those through to too
    under until up very was we we'll we're we've were what when where which while who whom why
    will with would you you'd you'll you're your yours yourself yourselves yes ok okay please
    thanks thank sure well really actually instead rather still going use using used
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def split_sentences(text: str) -> list[str]:
    """Sentences and list lines, verbatim. A fenced code block stays whole, attached to the
    sentence before it when that sentence introduces it (ends with a colon)."""
    pieces: list[str] = []
    position = 0
    for fence in _FENCE.finditer(text):
        pieces.extend(_prose_sentences(text[position : fence.start()]))
        block = fence.group().strip()
        if pieces and pieces[-1].endswith(":"):
            pieces[-1] = pieces[-1] + "\n" + block
        else:
            pieces.append(block)
        position = fence.end()
    pieces.extend(_prose_sentences(text[position:]))
    return [piece for piece in pieces if piece]


def _prose_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if line:
            sentences.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return sentences


def significant_words(text: str) -> set[str]:
    """Lower-case content words, roughly singular, without stop words."""
    words = set()
    for word in _WORD.findall(text.lower()):
        word = word.strip("'-")
        if len(word) < 3 or word in STOPWORDS:
            continue
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        words.add(word)
    return words


def literals(text: str) -> list[str]:
    """Numbers, identifiers and code spans in ``text``: what must be quoted verbatim."""
    found: list[str] = []
    spans = _CODE_SPAN.findall(text)
    found.extend(spans)
    rest = _CODE_SPAN.sub(" ", text)
    found.extend(match.rstrip(".-") for match in _IDENTIFIER.findall(rest))
    found.extend(match.rstrip(".,:/-") for match in _NUMBER.findall(_IDENTIFIER.sub(" ", rest)))
    return [value for value in dict.fromkeys(found) if value]


def overlap(small: set[str], large: set[str]) -> float:
    """Share of ``small``'s words found in ``large`` (0 when ``small`` is empty)."""
    if not small:
        return 0.0
    return len(small & large) / len(small)
