"""The optional parts of an assembly, and how a request goes on without one that fails or is slow.

Memory recall, retrieval, the summary lookup, the embedder and the reranker are extras around the
window (system prompt, pins, recent turns, the user's message). ``Parts.attempt`` runs one of them;
when it raises or runs past its time limit (``TimeLimits``), the request goes on with the part's
fallback and the report lists the part and why: ``"retrieval: timeout 100 ms"``,
``"summary: error StoreError"``. Reasons name a limit or an error's class, never content.

How a slow part is stopped, in a synchronous engine:

* **Database work** runs on the caller's thread, inside ``tx.time_limited(deadline)``: the
  database interrupts the statement running at the deadline (SQLite's progress handler,
  PostgreSQL's ``statement_timeout`` inside a savepoint), so nothing is left running on the
  transaction's connection, and a failed statement does not poison the rest of the request.
* **The embedder** is arbitrary code (a local model, a remote API) that nothing can interrupt,
  so it runs on a worker thread the request waits for at most the embedder's limit; a call that
  outlives it is abandoned (it finishes on its own and its result is dropped; it holds no
  transaction). While a part waits on the embedder its own clock stands still.

The message store itself is not a part: the window's reads happen outside ``attempt``, so their
``StoreError`` still fails the request; ``StoreBusy`` inside a part is let through too, since the
caller's retry is the answer to a busy database.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

from convmem.context.report import AssembledContext
from convmem.engine.request import Request
from convmem.errors import StoreBusy, TimeLimitExceeded
from convmem.model.deadline import Deadline, TimeLimits
from convmem.retrieval.limited import run_with_limit
from convmem.retrieval.matrix import Matrix
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder, RequestEmbedder, embed_queries
from convmem.store.base import TimeLimitedReads

T = TypeVar("T")
_log = logging.getLogger(__name__)


def reason(part: str, exc: BaseException | None) -> str:
    """How the report names a skipped part: its limit, or the class of its error."""
    if isinstance(exc, TimeLimitExceeded):
        return f"{part}: timeout {round(exc.limit * 1000)} ms"
    return f"{part}: error {type(exc).__name__}"


class _EmbedderFailed(Exception):
    """Raised through a step when the request's embedder failed, so the step can run again
    without vectors (the embedder is one part; the step's lexical half still works)."""


class Parts:
    """The parts of one request: their limits, the deadline of the one running, and the ones
    skipped."""

    def __init__(self, limits: TimeLimits) -> None:
        self.limits = limits
        self.reasons: list[str] = []
        self._running: Deadline | None = None

    def attempt(
        self,
        part: str,
        request: Request,
        step: Callable[[Request], T],
        fallback: T,
        tx: TimeLimitedReads | None = None,
    ) -> T:
        """``step(request)``, or ``fallback`` when it fails. With ``tx``, the step's reads stop
        at the part's time limit; without, the step is a write of its own (all or nothing),
        guarded against errors only."""
        limit = self.limits.of(part)
        deadline = Deadline(limit) if limit is not None and tx is not None else None
        return self._attempt(part, request, step, fallback, tx, deadline)

    def _attempt(
        self,
        part: str,
        request: Request,
        step: Callable[[Request], T],
        fallback: T,
        tx: TimeLimitedReads | None,
        deadline: Deadline | None,
    ) -> T:
        self._running = deadline
        try:
            if deadline is None or tx is None:
                return step(request)
            with tx.time_limited(deadline):
                return step(request)
        except StoreBusy:
            raise
        except _EmbedderFailed as failed:
            self._note("embedder", failed.__cause__)
            # again without vectors, in what is left of the part's time
            without = replace(request, embedder=None)
            return self._attempt(part, without, step, fallback, tx, deadline)
        except Exception as exc:
            self._note(part, exc)
            return fallback
        finally:
            self._running = None

    @contextmanager
    def waiting_on_another_part(self) -> Iterator[None]:
        """The running part's clock stands still inside (the embedder has a limit of its own)."""
        running = self._running
        if running is None:
            yield
            return
        with running.pause():
            yield

    def _note(self, part: str, exc: BaseException | None) -> None:
        why = reason(part, exc)
        if why not in self.reasons:
            _log.warning("assembly went without a part: %s", why)
            self.reasons.append(why)

    def report(self, context: AssembledContext) -> AssembledContext:
        """``context`` with the skipped parts in its report."""
        if not self.reasons:
            return context
        return replace(context, report=replace(context.report, degraded=list(self.reasons)))


class GuardedEmbedder:
    """The request's embedder as a part: at most ``limit`` seconds in all for the request, on a
    worker thread; the first failure or timeout is kept and every later call fails at once, so
    one broken or hung model costs the request one wait, not one per step."""

    def __init__(self, inner: Embedder, limit: float | None, parts: Parts) -> None:
        self._inner = inner
        self._parts = parts
        self._limit = limit
        self._left = limit
        self.failure: BaseException | None = None

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._guarded(lambda: self._inner.embed(texts))

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._guarded(lambda: embed_queries(self._inner, texts))

    def _guarded(self, call: Callable[[], Matrix]) -> Matrix:
        if self.failure is None:
            try:
                return self._timed(call)
            except Exception as exc:
                self.failure = exc
        raise _EmbedderFailed from self.failure

    def _timed(self, call: Callable[[], Matrix]) -> Matrix:
        if self._left is None or self._limit is None:
            return call()
        deadline = Deadline(self._left)
        with self._parts.waiting_on_another_part():
            try:
                return run_with_limit(call, deadline.remaining())
            except FutureTimeout:
                raise TimeLimitExceeded(self._limit) from None
            finally:
                self._left = deadline.remaining()


def without_failed_embedder(
    embedder: Embedder | None, limits: TimeLimits, step: Callable[[Embedder | None], T]
) -> tuple[T, list[str]]:
    """``step`` (a search) with the embedder as a part of it: within the embedder's time limit,
    and when the embedder fails or runs past it, ``step`` again without it (by words only).
    Returns the result and the parts it went without (as a report names them)."""
    if embedder is None:
        return step(None), []
    parts = Parts(limits)
    try:
        return step(GuardedEmbedder(RequestEmbedder(embedder), limits.embedder, parts)), []
    except _EmbedderFailed as failed:
        parts._note("embedder", failed.__cause__)
    return step(None), parts.reasons


class GuardedReranker:
    """A reranker under its time limit, on a worker thread like the embedder. When it fails or
    runs past the limit, ``score`` gives no scores (``reorder`` then leaves the fused order) and
    the reason is noted: in the request's report during an assembly (``parts``), in the log for
    a search. The first failure is kept: later calls of the same request give none at once."""

    def __init__(self, inner: Reranker, limit: float | None, parts: Parts | None = None) -> None:
        self._inner = inner
        self._limit = limit
        self._parts = parts
        self.failure: BaseException | None = None

    @property
    def name(self) -> str:
        return self._inner.name

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if self.failure is not None or not texts:
            return []
        try:
            if self._limit is None:
                return self._inner.score(query, texts)
            with self._waiting():
                try:
                    return run_with_limit(lambda: self._inner.score(query, texts), self._limit)
                except FutureTimeout:
                    raise TimeLimitExceeded(self._limit) from None
        except StoreBusy:
            raise
        except Exception as exc:
            self.failure = exc
            if self._parts is not None:
                self._parts._note("reranker", exc)
            else:
                _log.warning("search kept the fused order: %s", reason("reranker", exc))
            return []

    def _waiting(self) -> contextlib.AbstractContextManager[None]:
        if self._parts is None:
            return contextlib.nullcontext()
        return self._parts.waiting_on_another_part()


def guarded_reranker(
    reranker: Reranker | None, limits: TimeLimits, parts: Parts | None = None
) -> GuardedReranker | None:
    """``reranker`` under ``limits.reranker`` (None without a reranker)."""
    return None if reranker is None else GuardedReranker(reranker, limits.reranker, parts)
