"""BM25 over term frequencies: the one scoring of lexical relevance convmem computes itself.

SQLite's search scores the candidates FTS5 found with it (``convmem.store.sqlite.fts``: the
searched conversation's own statistics rather than the whole index's), and the retrieval layer
ranks texts that are never stored — a request's retrieved documents — with it
(``convmem.retrieval.lexical.rank_texts``). PostgreSQL computes the same shape in its query.
Plain arithmetic over counts: no text, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def bm25(
    keys: Sequence[str],
    tfs: Sequence[Mapping[str, float]],
    lengths: Sequence[int],
    total: int,
    k1: float,
    b: float,
    frequencies: Mapping[str, int],
) -> dict[str, float]:
    """BM25 of documents (key, term frequencies, length), with statistics over them (a term's
    document frequency at least its entry in ``frequencies``; ``total`` documents at least)."""
    if not keys:
        return {}
    df: dict[str, int] = {}
    for tf in tfs:
        for term in tf:
            df[term] = df.get(term, 0) + 1
    for term, counted in frequencies.items():
        if term in df and counted > df[term]:
            df[term] = counted
    average = max(1.0, sum(lengths) / len(lengths))
    n = max(total, len(keys))
    idf = {t: max(1e-6, math.log((n - d + 0.5) / (d + 0.5))) for t, d in df.items()}
    scores: dict[str, float] = {}
    for key, tf, length in zip(keys, tfs, lengths, strict=True):
        norm = k1 * (1 - b + b * length / average)
        scores[key] = sum(idf[t] * (f * (k1 + 1)) / (f + norm) for t, f in tf.items())
    return scores
