"""The engine's observer hook: what happened, in counts and ids' absence, for whoever watches.

The engine never imports the service or a metrics library; it calls an ``Observer`` that the
program driving it installs (the service and the worker install a Prometheus-backed one). The
default observes nothing. An observer sees reports, never message or memory content.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from convmem.context.report import AssemblyReport
from convmem.model.memory import MemoryNotice


class Observer(Protocol):
    """Called by the engine after each step an operator may want to count."""

    def assembled(self, report: AssemblyReport) -> None:
        """A request was assembled; ``report`` holds its token counts and ids."""

    def memory_notices(self, notices: Sequence[MemoryNotice]) -> None:
        """Saves, proposals, blocks (with their reason code), forgets and ambiguous forgets,
        from ``remember``/``propose``/``update`` and from a message's memory intent."""

    def memory_changed(self, action: str, count: int) -> None:
        """A user's change to existing memories: ``action`` is one of ``MEMORY_ACTIONS``."""


class NoObserver:
    """The default: nothing is observed."""

    def assembled(self, report: AssemblyReport) -> None:
        return None

    def memory_notices(self, notices: Sequence[MemoryNotice]) -> None:
        return None

    def memory_changed(self, action: str, count: int) -> None:
        return None
