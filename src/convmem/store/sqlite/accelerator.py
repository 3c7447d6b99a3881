"""SQLite's vector accelerator: exact cosine in numpy over a conversation's vectors, cached per
process.

SQLite has no vector search of its own. A principal's candidates are few — one conversation's
turns, one user's memories, a few thousand at most — so exact cosine in numpy scores them in well
under a millisecond; an approximate index would only pay at a scale one principal does not
reach. Reading ~2,000 vectors out of SQLite and converting them costs several milliseconds a
query, so a conversation's vectors and vocabulary stay in a small per-process LRU cache, checked
against the conversation's search generation (a counter the index triggers bump on every change
to its vectors or vocabulary), so a new or deleted turn is seen by the next search. The cache
holds ids and vectors, no text beyond single words.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

Matrix = npt.NDArray[np.float32]

# A search is one request's work on one thread: a service runs many at once. OpenBLAS otherwise
# splits each product over every core, and its threads spin against the other requests' — on
# this 2-core machine under load one expansion product took 5.8 ms of CPU so, 1.3 ms on one
# thread. The limit is set around our own products only and restored after them.
_BLAS = ThreadpoolController()


def _one_thread() -> Any:
    return _BLAS.limit(limits=1, user_api="blas")


@dataclass(frozen=True)
class ConversationVectors:
    """A conversation's turn vectors and vocabulary, as numpy arrays, at one generation."""

    generation: int
    ids: list[str]
    speakers: list[str]
    depths: npt.NDArray[np.int64]
    created: list[datetime]
    matrix: Matrix
    vocabulary: list[str]
    vocab_matrix: Matrix
    vocab_index: dict[str, int]


class VectorsCache:
    """Per-process cache of ``ConversationVectors`` (a few conversations, LRU)."""

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str, str, str], ConversationVectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self,
        key: tuple[str, str, str, str],
        generation: int | None,
        load: Callable[[], ConversationVectors],
    ) -> ConversationVectors:
        """The cached copy if it is at ``generation``, else ``load()`` (kept unless the
        generation is unknown)."""
        with self._lock:
            cached = self._items.get(key)
            if cached is not None and generation is not None and cached.generation == generation:
                self._items.move_to_end(key)
                return cached
        loaded = load()
        if generation is not None:
            with self._lock:
                self._items[key] = loaded
                self._items.move_to_end(key)
                while len(self._items) > self._capacity:
                    self._items.popitem(last=False)
        return loaded


def cosine_order(query: Matrix, matrix: Matrix) -> tuple[npt.NDArray[np.intp], Matrix]:
    """Row indices of ``matrix`` by descending cosine to the one-row ``query``, and the cosines."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    with _one_thread():
        sims = np.asarray(matrix @ query.reshape(-1), dtype=np.float32)
    return np.argsort(-sims, kind="stable"), sims


def nearest_words(
    term_vectors: Matrix,
    terms: Sequence[str],
    vocabulary: Sequence[str],
    vocab_matrix: Matrix,
    *,
    per_term: int = 5,
    min_similarity: float = 0.6,
) -> list[str]:
    """Expansion words: for each query term, up to ``per_term`` words of the vocabulary whose
    cosine to it is at least ``min_similarity`` (the term itself left out). Bridges a question's
    wording and the conversation's ("hobbies" → painting, pottery) without a thesaurus: the
    vocabulary is the conversation's own words. Deterministic: by term, similarity, word."""
    if not terms or not vocabulary:
        return []
    with _one_thread():
        sims = term_vectors @ vocab_matrix.T
    out: list[str] = []
    seen = set(terms)
    for i, term in enumerate(terms):
        row = sims[i]
        candidates = [int(j) for j in np.flatnonzero(row >= min_similarity)]
        ranked = sorted(candidates, key=lambda j: (-float(row[j]), vocabulary[j]))
        taken = 0
        for j in ranked:
            word = vocabulary[j]
            if word == term:
                continue
            if taken >= per_term:
                break
            taken += 1
            if word not in seen:
                seen.add(word)
                out.append(word)
    return out
