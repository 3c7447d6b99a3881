"""Filling vectors after the write: the write path never waits on, fails with or repeats because
of the embedder.

An append or a remember commits its text, counts and full-text rows with no vector; the row's
missing vector is its durable pending mark (``IndexReads.missing_message_vectors`` and
``missing_memory_vectors`` find it). After the commit the writer hands the row to a
``VectorFiller``: a bounded in-process queue drained by one daemon thread, started at the first
hand-over, which embeds a batch at a time (outside any transaction, within ``call_seconds``) and
stores the vectors in one write transaction per tenant (per user for memories) and batch.

When the embedder fails or hangs, the batch goes back to the head of the queue and the thread
waits (1 s, doubling up to ``max_backoff`` seconds) before it tries again. When the queue is full
a hand-over is dropped, not waited for: the row keeps its pending mark, and once the embedder
answers again the thread backfills from the store (``convmem.domain.indexing.backfill``), as the
worker does for rows no process queued (an import, a process that stopped first). The queue holds
a turn's indexed text in this process's memory until it is embedded; nothing of it is logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from convmem.domain.indexing import (
    PreparedTurn,
    backfill,
    index_long_conversations,
    keep_memory_vectors,
    keep_turn_vectors,
    vector_text,
)
from convmem.retrieval.caches import VectorCache, embed_with_words
from convmem.retrieval.limited import run_with_limit
from convmem.retrieval.vector import Embedder, Matrix, normalise
from convmem.store.base import MemoryVector, MessageVector, Store, TermVector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingTurn:
    """An indexed turn waiting for its vector (and its new words' vectors)."""

    tenant: str
    message_id: str
    prepared: PreparedTurn


@dataclass(frozen=True)
class PendingMemory:
    """A saved memory waiting for its vector."""

    tenant: str
    user: str
    memory_id: str
    text: str


Pending = PendingTurn | PendingMemory


class _Stopped(Exception):
    """The filler was closed while waiting out a failure."""


class VectorFiller:
    """One database's background embedding: ``queue`` never blocks; ``settle`` lets a reader
    wait (briefly) for what was queued before it; ``close`` stops the thread."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        cache: VectorCache,
        *,
        capacity: int = 10_000,
        batch_size: int = 128,
        call_seconds: float = 60.0,
        max_backoff: float = 30.0,
        embedder_for: Callable[[str], Embedder | None] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        # each tenant's serving embedder (an embedder switch may have changed it), else this one
        self._embedder_for = embedder_for
        self.cache = cache
        self.capacity = capacity
        self.batch_size = batch_size
        self.call_seconds = call_seconds
        self.max_backoff = max_backoff
        self._items: deque[Pending] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._queued = 0  # hand-overs so far
        self._settled = 0  # of them, embedded or handed to the store's backfill
        self._overflowed = False  # some were dropped: backfill from the store once it answers
        self._stalled = False  # a reader's wait ran out: readers stop waiting until a batch lands
        self.failures = 0  # consecutive failed attempts (0: healthy)
        self.last_error: str | None = None  # the class of the last failure, never its message
        self.filled = 0  # vectors stored by this filler (turns and memories)

    # --- the writers' side ----------------------------------------------------------------------

    def queue(self, items: Sequence[Pending]) -> None:
        """Hand rows over for embedding; returns at once (a full queue drops them: their pending
        mark in the store stays, and the thread backfills once the embedder answers)."""
        if not items:
            return
        with self._cond:
            if self._stopping:
                return
            for item in items:
                self._queued += 1
                if len(self._items) < self.capacity:
                    self._items.append(item)
                else:
                    self._settled += 1
                    self._overflowed = True
            self._start()
            self._cond.notify_all()

    @property
    def pending(self) -> int:
        """Rows handed over and not yet embedded, the batch in flight included (the dropped
        ones are the store's to find)."""
        with self._cond:
            return self._queued - self._settled

    @property
    def healthy(self) -> bool:
        return self.failures == 0

    def settle(self, timeout: float | None) -> bool:
        """Wait at most ``timeout`` seconds for what was queued before this call to be embedded;
        returns at once while the embedder is failing, or after a reader's wait ran out until
        the next batch is stored (a hung embedder costs one reader one wait, not every reader).
        True when nothing is left waiting."""
        with self._cond:
            target = self._queued
            deadline = None if timeout is None else time.monotonic() + timeout
            while self._settled < target and self.failures == 0 and not self._stalled:
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or self._stopping:
                    self._stalled = self._settled < target
                    break
                self._cond.wait(left)
            return self._settled >= target and not self._overflowed

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until the queue is empty and nothing dropped is left to backfill, through
        failures (a test or a benchmark waiting for recovery). True when it is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._settled < self._queued or self._items or self._overflowed:
                if self._thread is None:
                    self._start()
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or self._stopping:
                    return False
                self._cond.wait(left if left is not None else 0.5)
            return True

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread (what is still queued keeps its pending mark in the store)."""
        with self._cond:
            self._stopping = True
            thread = self._thread
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)

    def _start(self) -> None:
        if self._thread is None and not self._stopping:
            self._thread = threading.Thread(
                target=self._run, name="convmem-vector-filler", daemon=True
            )
            self._thread.start()

    # --- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._overflowed and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                batch = [
                    self._items.popleft() for _ in range(min(self.batch_size, len(self._items)))
                ]
            try:
                if batch:
                    self._fill(batch)
                else:
                    self._backfill()
            except Exception as exc:  # the embedder's or the store's: wait, then again
                self._failed(batch, exc)
                try:
                    self._wait_out()
                except _Stopped:
                    return
                continue
            self._index_long_conversations()
            with self._cond:
                self._settled += len(batch)
                self.failures = 0
                self._stalled = False
                self._cond.notify_all()

    def _index_long_conversations(self) -> None:
        """A conversation the stored turns made long: some of its older turns into the store's
        approximate index (no worker may be running to do it). Apart from the batch: the
        vectors are stored, so a failure here neither embeds them again nor counts against
        the embedder; the next batch, the worker or a backfill takes the steps left."""
        try:
            index_long_conversations(self.store)
        except Exception as exc:
            log.warning(
                "adding long conversations' turns to the approximate index failed (%s)",
                type(exc).__name__,
            )

    def _failed(self, batch: list[Pending], exc: BaseException) -> None:
        with self._cond:
            self._items.extendleft(reversed(batch))
            self.failures += 1
            self.last_error = type(exc).__name__
            self._cond.notify_all()
        log.warning(
            "embedding %d pending rows failed (%s, attempt %d); writes go on without vectors",
            len(batch), self.last_error, self.failures,
        )  # fmt: skip

    def _wait_out(self) -> None:
        wait = min(self.max_backoff, 2.0 ** (self.failures - 1))
        with self._cond:
            if not self._stopping:
                self._cond.wait_for(lambda: self._stopping, wait)
            if self._stopping:
                raise _Stopped

    def _embed(self, texts: Sequence[str], embedder: Embedder | None = None) -> Matrix:
        model = embedder or self.embedder
        try:
            return normalise(run_with_limit(lambda: model.embed(texts), self.call_seconds))
        except FutureTimeout:
            raise TimeoutError(f"the embedder took over {self.call_seconds} s") from None

    def _fill(self, batch: list[Pending]) -> None:
        """Embed each tenant's rows with the embedder serving it (a tenant served by one this
        process does not know keeps its pending marks, for a process that does)."""
        groups: dict[str, tuple[Embedder, list[Pending]]] = {}
        for item in batch:
            embedder = (
                self.embedder if self._embedder_for is None else self._embedder_for(item.tenant)
            )
            if embedder is not None:
                groups.setdefault(embedder.name, (embedder, []))[1].append(item)
        for _, (embedder, items) in sorted(groups.items()):
            self._fill_with(embedder, items)
        self.filled += sum(len(items) for _, items in groups.values())

    def _fill_with(self, embedder: Embedder, batch: list[Pending]) -> None:
        turns = [item for item in batch if isinstance(item, PendingTurn)]
        memories = [item for item in batch if isinstance(item, PendingMemory)]
        name = embedder.name
        turn_rows = self._embed([vector_text(t.prepared.turn.speaker, t.prepared.turn.body)
                                 for t in turns], embedder) if turns else None  # fmt: skip
        words = sorted({w for t in turns for w in t.prepared.words})
        _, word_vectors = embed_with_words(_Limited(self, embedder), self.cache, [], words)
        memory_rows = self._embed([m.text for m in memories], embedder) if memories else None
        by_tenant: dict[str, list[MessageVector]] = {}
        for index, turn in enumerate(turns):
            assert turn_rows is not None
            by_tenant.setdefault(turn.tenant, []).append(
                MessageVector(turn.message_id, turn_rows[index])
            )
        terms: dict[str, dict[str, TermVector]] = {}
        for turn in turns:
            for word in turn.prepared.words:
                terms.setdefault(turn.tenant, {})[word] = TermVector(word, word_vectors[word])
        by_owner: dict[tuple[str, str], list[MemoryVector]] = {}
        for index, memory in enumerate(memories):
            assert memory_rows is not None
            by_owner.setdefault((memory.tenant, memory.user), []).append(
                MemoryVector(memory.memory_id, memory_rows[index])
            )
        words_by_tenant = {tenant: list(words.values()) for tenant, words in terms.items()}
        keep_turn_vectors(self.store, name, by_tenant, words_by_tenant)
        keep_memory_vectors(self.store, name, by_owner)

    def _backfill(self) -> None:
        """After hand-overs were dropped: every row the store still marks pending."""
        with self._cond:
            self._overflowed = False
        try:
            limited = _Limited(self, self.embedder)
            while sum(backfill(self.store, limited, self.cache, max_batches=1).values()):
                if self._stopping:
                    return
        except BaseException:
            with self._cond:
                self._overflowed = True
            raise


class _Limited:
    """The filler's embedder as backfill and the word cache call it: each call within the
    filler's limit."""

    def __init__(self, filler: VectorFiller, embedder: Embedder) -> None:
        self._filler = filler
        self._embedder = embedder

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dimensions(self) -> int:
        return self._embedder.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._filler._embed(texts, self._embedder)
