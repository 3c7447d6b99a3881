"""FTS5 queries and ranking for SQLite: terms quoted so user text can never be read as query
syntax, and BM25 over the candidates' stored term counts with the searched conversation's own
statistics.

Each term is a double-quoted FTS5 string, so operators, parentheses, ``NEAR``, ``*``, ``^``,
column filters and quotes in user text are searched as text and never raise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from convmem.store.bm25 import bm25
from convmem.store.sqlite.term_counts import StemCounter, phrase_count


def quote(term: str) -> str:
    """One FTS5 string: the term in double quotes, embedded quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def or_query(terms: Sequence[str], *, columns: Sequence[str] = ()) -> str | None:
    """``"a" OR "b" …`` (restricted to ``columns`` when given); None for no terms: FTS5 rejects
    an empty MATCH, so the caller skips the search."""
    quoted = [quote(t) for t in terms if t]
    if not quoted:
        return None
    expression = " OR ".join(quoted)
    if columns:
        return "{" + " ".join(columns) + "} : (" + expression + ")"
    return expression


def _term_of(word: str, terms: Sequence[str]) -> str:
    """The query term a matched word answers: the one sharing its longest prefix (the stemmer
    made "camped" match "camping"; each query term counts the forms closest to it)."""
    if word in terms or not terms:
        return word
    best, shared = word, 0
    for term in terms:
        n = 0
        for a, b in zip(word, term, strict=False):
            if a != b:
                break
            n += 1
        if n > shared:
            best, shared = term, n
    return best


@dataclass(frozen=True)
class View:
    """One ranking's terms for ``bm25_rankings``: ``terms`` lower-cased; ``stems`` their FTS5
    tokens (by term; several for a term FTS5 reads as a phrase, "e-mail"). With
    ``matching_only`` a candidate holding none of them is left out (a narrower query's ranking
    from a wider one's candidates)."""

    terms: Sequence[str]
    stems: Mapping[str, tuple[str, ...]]
    matching_only: bool = False


# a candidate: its key, its columns' stored term counts, its length in words
Candidate = tuple[str, Sequence[str | None], int]


def bm25_scores(
    candidates: Sequence[Candidate],
    total: int,
    weights: Sequence[float],
    view: View,
    *,
    frequencies: Mapping[str, int] | None = None,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[str, float]:
    """BM25 over candidate documents with statistics from the collection searched (``total``
    documents) rather than from the whole index.

    FTS5's own ``bm25()`` counts, for every query term, every row of the table that holds it:
    at a million messages a common word costs tens of milliseconds, whoever searches. Scoped to
    one conversation, the candidates are that conversation's matching turns, and its own
    statistics are the ones that say how telling a word is there. The counts are the row's
    stored ones (``term_counts``): each word the index matches for a term (a word stemming as
    a term does) counts for the query term it shares the longest prefix with, standing in for
    the stemmer's grouping. Column weights as in FTS5: a column's hits count ``weight`` times;
    document length is the word count of all columns. A term's document frequency is the number
    of candidates holding it, or its entry in ``frequencies`` (lower-cased term → turns of the
    collection holding it) when that is larger: the candidates may be a bounded share of the
    matching turns.
    """
    (scores,) = bm25_rankings(
        candidates, total, weights, [view], frequencies=frequencies, k1=k1, b=b
    )
    return scores


def bm25_rankings(
    candidates: Sequence[Candidate],
    total: int,
    weights: Sequence[float],
    views: Sequence[View],
    *,
    frequencies: Mapping[str, int] | None = None,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[dict[str, float]]:
    """``bm25_scores`` for each of ``views`` from one read of each candidate's counts (the
    stems of every view searched at once, in C). A candidate that comes twice counts once."""
    single = [{t[0] for t in view.stems.values() if len(t) == 1} for view in views]
    phrases = [[(term, t) for term, t in view.stems.items() if len(t) > 1] for view in views]
    counter = StemCounter(t for view in views for tokens in view.stems.values() for t in tokens)
    # (word, stem) → the (view, term) it counts for; words recur across candidates
    counts_for: dict[tuple[str, str], list[tuple[int, str]]] = {}
    tfs: dict[str, list[dict[str, float]]] = {}
    lengths: dict[str, int] = {}
    for key, columns, length in candidates:
        if key in tfs:
            continue
        lengths[key] = length
        tf: list[dict[str, float]] = [{} for _ in views]
        tfs[key] = tf
        for weight, stored in zip(weights, columns, strict=True):
            found = counter.words(stored)
            for word, stem, n in found:
                targets = counts_for.get((word, stem))
                if targets is None:
                    targets = counts_for[(word, stem)] = [
                        (i, _term_of(word, view.terms))
                        for i, view in enumerate(views)
                        if stem in single[i]
                    ]
                for i, term in targets:
                    tf[i][term] = tf[i].get(term, 0.0) + weight * n
            if not any(phrases):
                continue
            by_stem: dict[str, int] = {}  # the column's counts by stem, once for every view
            for _, stem, n in found:
                by_stem[stem] = by_stem.get(stem, 0) + n
            for i, phrase_terms in enumerate(phrases):
                for term, tokens in phrase_terms:
                    if n := phrase_count(tokens, by_stem):
                        tf[i][term] = tf[i].get(term, 0.0) + weight * n
    out = []
    for i, view in enumerate(views):
        kept = [key for key, tf in tfs.items() if not view.matching_only or tf[i]]
        out.append(
            bm25(kept, [tfs[key][i] for key in kept], [lengths[key] for key in kept], total,
                    k1, b, frequencies or {})
        )  # fmt: skip
    return out
