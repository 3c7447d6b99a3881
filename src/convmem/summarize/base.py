"""The ``Summarizer`` extension point and what a summarizer returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from convmem.model.messages import Message
from convmem.model.snapshot import Snapshot
from convmem.model.summary import SummaryCost


@dataclass(frozen=True)
class SummaryResult:
    """A new snapshot, what it cost, when a model failed and a fallback stood in, why, and what
    the summarizer produced before checking it."""

    snapshot: Snapshot
    cost: SummaryCost = field(default_factory=SummaryCost)
    fallback_reason: str | None = None
    # what the summarizer wrote before its own checks kept or mended notes (a model's raw
    # snapshot); None when nothing was filtered. Never stored: faithfulness is measured on it.
    produced: Snapshot | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Rolls a snapshot forward: ``summarize(previous, turns)`` with ``turns`` oldest first.

    ``name`` and ``prompt_version`` key the stored summaries: a summary is reused only by the same
    summarizer at the same version. ``inline`` says the summarizer is cheap and never waits on a
    network, so assembly may run it on the request path; otherwise a worker runs it.
    """

    @property
    def name(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    @property
    def inline(self) -> bool: ...

    def summarize(self, previous: Snapshot | None, turns: Sequence[Message]) -> SummaryResult: ...
