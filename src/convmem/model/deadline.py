"""A time limit on one part of a request, as a value the engine and the store share.

The engine starts a part with a ``Deadline``; the store checks it where it can stop (inside a
running statement, between statements) and the engine where it waits (the embedder's worker
thread). ``pause`` moves the deadline by the time a part spent waiting on another part with a
limit of its own, so each part is charged for its own work only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from convmem.errors import InvalidInput


class Deadline:
    """``limit`` seconds from its start (``time.monotonic``)."""

    __slots__ = ("at", "limit")

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.at = time.monotonic() + limit

    def passed(self) -> bool:
        return time.monotonic() > self.at

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def milliseconds(self) -> int:
        """The limit in whole milliseconds, as reports name it."""
        return round(self.limit * 1000)

    @contextmanager
    def pause(self) -> Iterator[None]:
        """The time spent inside is not charged to this deadline."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.at += time.monotonic() - started


TIME_LIMITED_PARTS = ("memories", "tools", "retrieval", "summary", "embedder", "reranker")


@dataclass(frozen=True)
class TimeLimits:
    """How long each optional part of an assembly may take, in seconds (None: no limit): memory
    recall, the registry tools' selection, retrieval, the summary lookup, the embedder and the
    reranker (a reranker past its limit leaves the fused order: ``"reranker: timeout 2000 ms"``).

    A part past its limit is stopped and the request goes on without it (the report says
    ``"retrieval: timeout 1000 ms"``). The limits bound each part's own work: the time a part
    spends waiting on the embedder is the embedder's, not the part's.

    The defaults are generous on purpose: they bound a hung part (a table locked by a migration,
    a dead embedding API), and a busy machine must not trip a healthy one. An application that
    would rather answer without retrieval than wait sets tighter ones. The summary's is the
    largest because a first summary of a long conversation is built inline, once.
    """

    memories: float | None = 1.0
    tools: float | None = 1.0
    retrieval: float | None = 1.0
    summary: float | None = 5.0
    embedder: float | None = 2.0
    reranker: float | None = 2.0

    def __post_init__(self) -> None:
        for name in TIME_LIMITED_PARTS:
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value > 0):
                raise InvalidInput(f"the time limit for {name} must be positive seconds or None")

    def of(self, part: str) -> float | None:
        limit: float | None = getattr(self, part)
        return limit
