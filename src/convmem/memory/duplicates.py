"""When two statements say the same thing: the test consolidation groups repeated statements by
and a confirmation merges near-duplicate memories by.

Two statements about one slot ("seat", "home") are the same when they give the same value ("I
prefer aisle seats" and "I really prefer aisle seats on long flights"), and never when the values
differ ("aisle" against "window": a change, which supersession handles). Otherwise they are the
same when their content words, by stem and without accents, overlap by at least
``NEAR_DUPLICATE`` (Jaccard): the words of a statement rather than its characters, so that word
order, inflection and filler do not count.
"""

from __future__ import annotations

from convmem.memory.slots import content_stems, slot_value

NEAR_DUPLICATE = 0.6


def _jaccard_at_least(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    if not a or not b:
        return False
    shared = len(a & b)
    return shared >= threshold * (len(a) + len(b) - shared)


def near_duplicates(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """Whether statements ``a`` and ``b`` say the same thing about the speaker."""
    value_a, value_b = slot_value(a), slot_value(b)
    if value_a is not None and value_b is not None and value_a.subject == value_b.subject:
        return value_a.agrees_with(value_b)
    return _jaccard_at_least(content_stems(a), content_stems(b), threshold)
