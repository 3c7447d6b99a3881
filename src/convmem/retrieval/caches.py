"""The in-process vector cache (words, and queries by digest), and embedding through it.

It holds vectors of single words and of recent queries, only in memory; a query is keyed by a
digest of its text, so no text beyond single words is held. (A conversation's turn vectors are
cached by the store backend that needs it: ``convmem.store.sqlite.accelerator``.)
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

import numpy as np

from convmem.retrieval.vector import Embedder, Matrix, embed_queries, normalise
from convmem.store.base import Vector

KT = TypeVar("KT", bound=Hashable)


class VectorCache:
    """In-process word → vector memo (per embedder), bounded, and a smaller one of query
    vectors. Words recur across turns and queries; embedding each once per process takes the
    model off the common path. A query recurs less, but when it does (a retried request, a
    search and an assembly for the same message) its vector costs nothing. Holds no content
    beyond single words (queries are keyed by a digest), and only in memory."""

    def __init__(self, capacity: int = 50_000, queries: int = 1024) -> None:
        self._words: _Lru[tuple[str, str]] = _Lru(capacity)
        self._queries: _Lru[tuple[str, bytes]] = _Lru(queries)

    def get(self, embedder: str, word: str) -> Matrix | None:
        return self._words.get((embedder, word))

    def put(self, embedder: str, word: str, vector: Matrix) -> None:
        self._words.put((embedder, word), vector)

    def query(self, embedder: str, text: str) -> Matrix | None:
        return self._queries.get((embedder, _digest(text)))

    def put_query(self, embedder: str, text: str, vector: Matrix) -> None:
        self._queries.put((embedder, _digest(text)), vector)

    def forget_queries(self) -> None:
        """Drop every query vector (a benchmark timing the model, say)."""
        self._queries.clear()


class _Lru(Generic[KT]):
    """A bounded, thread-safe map that forgets the least recently used entry first."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[KT, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: KT) -> Matrix | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: KT, value: Matrix) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def query_vector(embedder: Embedder, cache: VectorCache, text: str) -> Matrix:
    """``text``'s unit vector as a query (``embed_queries``), from the cache when it was
    embedded recently by the same embedder."""
    known = cache.query(embedder.name, text)
    if known is not None:
        return known
    vector: Matrix = embed_queries(embedder, [text])[0]
    vector.setflags(write=False)  # shared between requests: nobody may change it
    cache.put_query(embedder.name, text, vector)
    return vector


def embed_with_words(
    embedder: Embedder,
    cache: VectorCache,
    texts: Sequence[str],
    words: Sequence[str],
    stored: Callable[[Sequence[str]], dict[str, Vector]] | None = None,
) -> tuple[Matrix, dict[str, Matrix]]:
    """Vectors for ``texts`` and ``words``. A word comes from the process cache, else from
    ``stored`` (the tenant's word vectors), else from the model — in a call of its own: batched
    with a sentence, each one-word row would be padded to the sentence's length (a query with four
    new words took 24 ms in one call, 8 + 6 ms in two)."""
    vectors: dict[str, Matrix] = {}
    missing: list[str] = []
    for word in words:
        known = cache.get(embedder.name, word)
        if known is None:
            missing.append(word)
        else:
            vectors[word] = known
    if missing and stored is not None:
        found = stored(missing)
        for word, vector in found.items():
            cache.put(embedder.name, word, vector)
            vectors[word] = vector
        missing = [w for w in missing if w not in found]
    if missing:
        for word, row in zip(missing, normalise(embedder.embed(missing)), strict=True):
            cache.put(embedder.name, word, row)
            vectors[word] = row
    rows = normalise(embedder.embed(texts)) if texts else np.zeros((0, 1), dtype=np.float32)
    return rows, vectors
