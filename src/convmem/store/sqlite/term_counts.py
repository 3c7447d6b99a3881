"""Each index row's term counts, stored beside it, so ranking never tokenises a turn again.

BM25 needs, for every candidate turn, how often each query word occurs in it and how long it is.
FTS5 finds the candidates from its index but does not give those counts to an application; they
came from its highlights, which tokenise the candidate's text anew on every query — on BEAM's
long user ↔ assistant chats most of a search's time (160 of ~190 turns match some word of a
question; ~480 KB of text each). Counted once when the row is written, a column's counts are a
short text read with the row and searched in C for the query's stems.

The counts are FTS5's own tokens: the text is cut at whitespace and ASCII punctuation (which
unicode61 always separates at) and each distinct piece goes through the index's tokenizer
(``STEMS``, memoised), which splits, folds and stems it as the index did. A Python rule for the
rest would disagree with FTS5's Unicode 6.1 tables (emoji newer than them are token characters
there, "İ" folds to "i", private-use characters are letters), so a word counts exactly when the
index matches it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from convmem.store.sqlite.stems import STEMS

# pieces between whitespace and ASCII punctuation: separators for unicode61 whatever the version
_PIECE = re.compile(r"[^\s!-/:-@\[-`{-~]+")
# an entry is ENTRY stem FIELD count SURFACE word: an FTS5 token, how often the word stemming to
# it occurs, and the word as written (lower-cased; empty when it is the stem itself). None of the
# separators is a token character or inside a piece (they are whitespace to Python), so a stem
# followed by FIELD is matched whole; the stem comes first so the search tries its alternatives
# right at each entry's start.
ENTRY, SURFACE, FIELD = "\x1f", "\x1d", "\x1e"


class ColumnTerms:
    """A column's stored counts and its length in words (BM25's length: whitespace words)."""

    __slots__ = ("counts", "words")

    def __init__(self, counts: str, words: int) -> None:
        self.counts = counts
        self.words = words


def column_terms(text: str | None) -> ColumnTerms:
    """``text`` (as the index holds it: its index form) counted by word and FTS5 token. The
    words are kept beside their stems because a query's inflections count apart ("camping" and
    "camped" are two terms of a query, each counting its own form); a piece the tokenizer
    splits in several counts as its tokens."""
    if not text:
        return ColumnTerms("", 0)
    pieces = Counter(_PIECE.findall(text))
    counts: Counter[tuple[str, str]] = Counter()
    for piece, keys in _ENTRY_KEYS.of(list(pieces)).items():
        n = pieces[piece]
        for key in keys:
            counts[key] += n
    stored = "".join(f"{ENTRY}{token}{FIELD}{n}{word}" for (word, token), n in counts.items())
    return ColumnTerms(stored, len(text.split()))


class _EntryKeys:
    """piece → the (SURFACE word, stem) keys of its entries, memoised per process (a few
    thousand distinct pieces make most of a chat; cleared when full): the lock, the LRU order
    and the lower-casing of ``STEMS`` for every piece of every row were most of a write's
    counting."""

    def __init__(self, capacity: int = 100_000) -> None:
        self._capacity = capacity
        self._keys: dict[str, tuple[tuple[str, str], ...]] = {}

    def of(self, pieces: Sequence[str]) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each of ``pieces`` (distinct) with its keys, in their order (a row's stored text is
        the same whatever the process saw before)."""
        known = self._keys
        found: dict[str, tuple[tuple[str, str], ...]] = {}
        missing: list[str] = []
        for piece in pieces:
            keys = known.get(piece)
            if keys is None:
                missing.append(piece)
            else:
                found[piece] = keys
        if missing:
            if len(known) + len(missing) > self._capacity:
                known.clear()
            for piece, tokens in STEMS.of(missing).items():
                word = piece.lower()
                keys = (
                    ((SURFACE + ("" if word == tokens[0] else word), tokens[0]),)
                    if len(tokens) == 1
                    else tuple((SURFACE, token) for token in tokens)
                )
                found[piece] = known[piece] = keys
        return {piece: found[piece] for piece in pieces} if missing else found


_ENTRY_KEYS = _EntryKeys()


def stored_tokens(stored: str) -> Counter[str]:
    """A column's stored counts by FTS5 token."""
    tokens: Counter[str] = Counter()
    for entry in filter(None, stored.split(ENTRY)):
        token, count_word = entry.split(FIELD)
        tokens[token] += int(count_word.split(SURFACE)[0])
    return tokens


class StemCounter:
    """Reads the words of a query's stems out of stored columns: one regular expression over
    the column's text, its alternatives the stems."""

    def __init__(self, stems: Iterable[str]) -> None:
        wanted = "|".join(map(re.escape, sorted(set(stems), key=len, reverse=True)))
        self._pattern = (
            re.compile(f"{ENTRY}({wanted}){FIELD}" + r"(\d+)" + f"{SURFACE}([^{ENTRY}]*)")
            if wanted
            else None
        )

    def words(self, stored: str | None) -> list[tuple[str, str, int]]:
        """(word as written, its stem, count) of each of the stems' words in ``stored``."""
        if not stored or self._pattern is None:
            return []
        return [(word or stem, stem, int(n)) for stem, n, word in self._pattern.findall(stored)]


def phrase_count(tokens: Sequence[str], counts: Mapping[str, int]) -> int:
    """How often a phrase of several tokens may occur in a column: its rarest token's count (an
    upper bound: the counts hold no positions)."""
    return min((counts.get(token, 0) for token in tokens), default=0)
