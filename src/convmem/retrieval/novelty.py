"""Near-duplicate suppression for the retrieved section: a turn that says what the window or a
turn already chosen says adds tokens, not information.

Two texts are near-duplicates when their sets of words (split as the index splits them) have a
Jaccard similarity of at least the threshold — unless the later one holds a word the new message
asks about that the other lacks: "Question 3: what about item 3?" is not redundant beside
"Question 95: what about item 95?" when the user asks about item 3. Words rather than characters
so the notion of "the same thing said" is the one search uses; sets rather than sequences so a
repeated question with other numbers, or a regenerated answer, counts as the same turn.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from convmem.retrieval.lexical import words

T = TypeVar("T")

# At 0.7 two texts share at least 70 % of the words either uses: a question asked again with
# other numbers, an answer regenerated from the same template. Distinct turns on one topic share
# far less (their content words differ even where the subject is the same).
NEAR_DUPLICATE = 0.7


def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def similar(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """Jaccard(a, b) >= threshold; the size test first, since it bounds the Jaccard."""
    small, large = sorted((len(a), len(b)))
    if not large or small < threshold * large:
        return False
    shared = len(a & b)
    return shared >= threshold * (len(a) + len(b) - shared)


def novel(
    ranked: Sequence[T],
    text_of: Callable[[T], str],
    shown: Iterable[str],
    *,
    asked: Iterable[str] = (),
    limit: int,
    threshold: float = NEAR_DUPLICATE,
) -> list[T]:
    """The first ``limit`` of ``ranked`` (in rank order) that are no near-duplicate of a text in
    ``shown`` nor of one taken before them; ``asked`` are the new message's terms (lower-cased
    words), which make a near-duplicate that holds one the other lacks worth its place."""
    wanted = frozenset(asked)
    seen = _BySize(word_set(text) for text in shown)
    taken: list[T] = []
    for item in ranked:
        if len(taken) >= limit:
            break
        mine = word_set(text_of(item))
        if any(
            similar(mine, other, threshold) and not (mine - other) & wanted
            for other in seen.comparable(len(mine), threshold)
        ):
            continue
        seen.add(mine)
        taken.append(item)
    return taken


class _BySize:
    """Word sets ordered by size: a set can only be similar to one whose size is within the
    threshold's ratio of its own (the Jaccard is at most small / large), so a candidate is
    compared with those alone — a few of the window's ~100 turns, where each candidate was
    compared with every one (most of suppression's time at 16k-token budgets)."""

    def __init__(self, sets: Iterable[frozenset[str]]) -> None:
        pairs = sorted(((len(s), s) for s in sets), key=lambda pair: pair[0])
        self._sizes = [size for size, _ in pairs]
        self._sets = [s for _, s in pairs]

    def add(self, words: frozenset[str]) -> None:
        at = bisect.bisect_right(self._sizes, len(words))
        self._sizes.insert(at, len(words))
        self._sets.insert(at, words)

    def comparable(self, size: int, threshold: float) -> list[frozenset[str]]:
        """The sets ``similar`` may accept beside one of ``size`` words (a margin of one word
        each side; ``similar`` makes the exact test)."""
        if threshold <= 0:
            return self._sets
        low = bisect.bisect_left(self._sizes, math.floor(size * threshold) - 1)
        high = bisect.bisect_right(self._sizes, math.ceil(size / threshold) + 1)
        return self._sets[low:high]
