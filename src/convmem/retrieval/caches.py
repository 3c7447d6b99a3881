"""In-process vector caches for search: word vectors, and a conversation's turn vectors.

Both hold vectors and ids, never text beyond single words, and only in memory; the store's
generation number tells the conversation cache when a copy is stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from convmem.retrieval.vector import Embedder, Matrix, normalise
from convmem.store.base import ReadTxn, Vector
from convmem.store.sqlite.vectors import from_blobs

if TYPE_CHECKING:
    from convmem.memories import Principal


class VectorCache:
    """In-process word → vector memo (per embedder), bounded. Words recur across turns and
    queries; embedding each once per process takes the model off the common path. Holds no
    content beyond single words, and only in memory."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str], Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, embedder: str, word: str) -> Matrix | None:
        with self._lock:
            vector = self._items.get((embedder, word))
            if vector is not None:
                self._items.move_to_end((embedder, word))
            return vector

    def put(self, embedder: str, word: str, vector: Matrix) -> None:
        with self._lock:
            self._items[(embedder, word)] = vector
            if len(self._items) > self._capacity:
                self._items.popitem(last=False)


@dataclass(frozen=True)
class ConversationVectors:
    """A conversation's turn vectors and vocabulary, as numpy arrays, at one generation."""

    generation: int
    ids: list[str]
    speakers: list[str]
    depths: npt.NDArray[np.int64]
    depth_of: dict[str, int]  # the same depths by message id, for the neighbour lift
    created: list[datetime]
    matrix: Matrix
    vocabulary: list[str]
    vocab_matrix: Matrix


class VectorsCache:
    """Per-process cache of ``ConversationVectors`` (a few conversations, LRU). Reading ~2,000
    vectors out of SQLite and converting them costs several milliseconds a query; the store's
    generation number says whether the cached copy is current, so a change — a new turn, a
    deleted one — is seen by the next search. Holds ids and vectors, no text."""

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str, str, str], ConversationVectors] = OrderedDict()
        self._lock = threading.Lock()

    def load(
        self, tx: ReadTxn, who: Principal, conversation_id: str, embedder: str
    ) -> ConversationVectors:
        key = (who.tenant, who.user, conversation_id, embedder)
        generation = tx.search_generation(who.tenant, conversation_id)
        with self._lock:
            cached = self._items.get(key)
            if cached is not None and generation is not None and cached.generation == generation:
                self._items.move_to_end(key)
                return cached
        rows = tx.message_vectors(who.tenant, who.user, conversation_id, embedder)
        terms = tx.term_vectors(who.tenant, conversation_id, embedder)
        speakers = {s.lower() for s in tx.conversation_speakers(who.tenant, conversation_id)}
        terms = [(t, b) for t, b in terms if t not in speakers]
        dims = len(rows[0].vector) // 2 if rows else len(terms[0][1]) // 2 if terms else 1
        loaded = ConversationVectors(
            generation=generation if generation is not None else -1,
            ids=[r.message_id for r in rows],
            speakers=[r.speaker for r in rows],
            depths=np.asarray([r.depth for r in rows], dtype=np.int64),
            depth_of={r.message_id: r.depth for r in rows},
            created=[r.created_at for r in rows],
            matrix=from_blobs([r.vector for r in rows], dims),
            vocabulary=[t for t, _ in terms],
            vocab_matrix=from_blobs([b for _, b in terms], dims),
        )
        if generation is not None:
            with self._lock:
                self._items[key] = loaded
                self._items.move_to_end(key)
                while len(self._items) > self._capacity:
                    self._items.popitem(last=False)
        return loaded


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
