"""FTS5 queries and ranking for SQLite: terms quoted so user text can never be read as query
syntax, and BM25 over FTS5's highlights with the searched conversation's own statistics.

Each term is a double-quoted FTS5 string, so operators, parentheses, ``NEAR``, ``*``, ``^``,
column filters and quotes in user text are searched as text and never raise.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from convmem.store.bm25 import bm25

# runs of word characters, lower-cased, underscores out: as FTS5's unicode61 tokenizer splits text
_TOKEN = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return [w.replace("_", "") for w in _TOKEN.findall(text.lower()) if w.strip("_")]


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


MARK_OPEN, MARK_CLOSE = "\x01", "\x02"
_SPAN = re.compile(MARK_OPEN + "([^" + MARK_CLOSE + "]*)" + MARK_CLOSE)


def _term_of(token: str, terms: Sequence[str]) -> str:
    """The query term a matched token answers: the one sharing its longest prefix (the stemmer
    made "camped" match "camping"; both count as one term)."""
    if token in terms or not terms:
        return token
    best, shared = token, 0
    for term in terms:
        n = 0
        for a, b in zip(token, term, strict=False):
            if a != b:
                break
            n += 1
        if n > shared:
            best, shared = term, n
    return best


class WordCounts:
    """Whitespace word counts of candidate columns (near enough the token count, for BM25's
    length normalisation), memoised by a hash of the text without its highlight marks. The same
    turns come back query after query, and splitting them anew was a third of BM25's time (it
    allocates every word). Holds counts only, never text; cleared when full."""

    def __init__(self, capacity: int = 100_000) -> None:
        self._capacity = capacity
        self._counts: dict[int, int] = {}

    def of(self, text: str) -> int:
        clean = text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "") if MARK_OPEN in text else text
        key = hash(clean)
        count = self._counts.get(key)
        if count is None:
            if len(self._counts) >= self._capacity:
                self._counts.clear()
            count = self._counts[key] = len(clean.split())
        return count


WORD_COUNTS = WordCounts()


@dataclass(frozen=True)
class Terms:
    """One ranking's terms for ``bm25_rankings``; ``keep`` (when set) accepts the highlighted
    tokens that count for them — a candidate none counts for is left out."""

    terms: Sequence[str]
    keep: Callable[[str], bool] | None = None


def bm25_scores(
    candidates: Sequence[tuple[str, Sequence[str]]],
    total: int,
    weights: Sequence[float],
    *,
    terms: Sequence[str] = (),
    frequencies: Mapping[str, int] | None = None,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[str, float]:
    """BM25 over candidate documents whose columns come highlighted by FTS5, with statistics
    from the collection searched (``total`` documents) rather than from the whole index.

    FTS5's own ``bm25()`` counts, for every query term, every row of the table that holds it:
    at a million messages a common word costs tens of milliseconds, whoever searches. Scoped to
    one conversation, the candidates are that conversation's matching turns, and its own
    statistics are the ones that say how telling a word is there. Each matched token (from the
    highlighted spans) counts for the query term of ``terms`` it shares the longest prefix with,
    standing in for the stemmer's grouping. Column weights as in FTS5: a column's hits count
    ``weight`` times; document length is the word count of all columns. A term's document
    frequency is the number of candidates holding it, or its entry in ``frequencies`` (lower-cased
    term → turns of the collection holding it) when that is larger: the candidates may be a
    bounded share of the matching turns.
    """
    (scores,) = bm25_rankings(
        candidates, total, weights, [Terms(terms)], frequencies=frequencies, k1=k1, b=b
    )
    return scores


def bm25_rankings(
    candidates: Sequence[tuple[str, Sequence[str]]],
    total: int,
    weights: Sequence[float],
    views: Sequence[Terms],
    *,
    frequencies: Mapping[str, int] | None = None,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[dict[str, float]]:
    """``bm25_scores`` for each of ``views`` from one pass over the candidates' highlights: with
    a view's ``keep`` accepting the tokens that match its terms, the highlights of a wider query
    score as a query of those terms alone would. A candidate may come several times, its columns
    highlighted for different terms each time (one search per term): its term frequencies are
    the sum of its entries', its length that of its first."""
    lowered = [[t.lower() for t in view.terms] for view in views]
    # a marked span → (view, query term) for each of its tokens; spans repeat across candidates
    memo: dict[str, list[tuple[int, str]]] = {}
    tfs: dict[str, list[dict[str, float]]] = {}
    lengths: dict[str, int] = {}
    count_words = WORD_COUNTS.of
    for key, columns in candidates:
        tf = tfs.get(key)
        if tf is None:
            tf = tfs[key] = [{} for _ in views]
            lengths[key] = sum(map(count_words, columns))
        for weight, text in zip(weights, columns, strict=True):
            if not text or MARK_OPEN not in text:
                continue
            # the marked spans counted in C (a loop over them in Python was most of a long
            # chat's search): each distinct span is then read once per column
            for span, n in Counter(_SPAN.findall(text)).items():
                matched = memo.get(span)
                if matched is None:
                    matched = memo[span] = [
                        (i, _term_of(w, lowered[i]))
                        for i, view in enumerate(views)
                        for w in _tokens(span)
                        if view.keep is None or view.keep(w)
                    ]
                for i, term in matched:
                    counts = tf[i]
                    counts[term] = counts.get(term, 0.0) + weight * n
    out = []
    for i, view in enumerate(views):
        kept = [key for key, tf in tfs.items() if view.keep is None or tf[i]]
        out.append(
            bm25(kept, [tfs[key][i] for key in kept], [lengths[key] for key in kept], total,
                    k1, b, frequencies or {})
        )  # fmt: skip
    return out
