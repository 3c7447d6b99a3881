"""Changing a tenant's embedder without downtime (issue 33 item 5): the store's side.

A tenant's searches are served by the vectors of its *active* embedder (no record: whichever
embedder the process runs, as before). A switch names a *target*: its vectors are built into
staging tables (``staged_message_vectors``, ``staged_memory_vectors``; word vectors are keyed by
embedder already) while the active ones keep serving; ``finish_embedder_switch`` then moves them
in and erases the old ones in one transaction, so each search sees one embedder's vectors or
the other's, never a mix. Vectors are keyed by the embedder's name (a width is part of it:
``hashing-256``); the target's width is recorded and every staged batch checked against it.

While a tenant's active embedder is another, a process running an older one writes none of its
vectors there and finds none missing (``set_*_vectors`` and ``missing_*_vectors`` skip the
tenant): a worker left on the old model cannot undo a switch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from convmem.store.search_index import MemoryVector, MessageVector, MissingMessageVector


@dataclass(frozen=True)
class EmbedderSwitch:
    """A tenant's embedders: the one serving (``active``, None before any switch) and the one
    being built (``target``, None when no switch is under way) with its width."""

    tenant_id: str
    active: str | None
    target: str | None
    target_dimensions: int | None
    started_at: datetime | None
    switched_at: datetime | None


@dataclass(frozen=True)
class UnstagedMemory:
    """A memory the target embedder has no vector for yet (its text, to embed)."""

    user_id: str
    memory_id: str
    text: str


@dataclass(frozen=True)
class StagedCounts:
    """How far a build is: rows with a staged vector and rows still without one."""

    turns_staged: int
    turns_left: int
    memories_staged: int
    memories_left: int
    words_left: int


class EmbedderSwitchReads(Protocol):
    def embedder_switch(self, tenant: str) -> EmbedderSwitch | None:
        """The tenant's record (None: never switched)."""
        ...

    def unstaged_turns(self, tenant: str, embedder: str, limit: int) -> list[MissingMessageVector]:
        """Indexed turns of the tenant with neither a vector from ``embedder`` nor a staged one."""
        ...

    def unstaged_memories(self, tenant: str, embedder: str, limit: int) -> list[UnstagedMemory]:
        """Current memories (confirmed or proposed) of the tenant, likewise."""
        ...

    def unstaged_words(self, tenant: str, embedder: str, limit: int) -> list[str]:
        """Words the tenant's conversations use with no vector from ``embedder``."""
        ...

    def staged_counts(self, tenant: str, embedder: str) -> StagedCounts: ...

    def switches_to(self, embedder: str) -> list[str]:
        """The tenants whose switch to ``embedder`` is under way (every tenant: the worker's)."""
        ...


class EmbedderSwitchWrites(Protocol):
    def begin_embedder_switch(
        self, tenant: str, active: str | None, target: str, dimensions: int, at: datetime
    ) -> None:
        """Record ``target`` as the tenant's embedder being built (``active``: the one serving,
        kept when a record exists). Staged vectors of another target are dropped."""
        ...

    def stage_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        """Keep the target's vectors of indexed turns (only while ``embedder`` is the target,
        only for turns still indexed)."""
        ...

    def stage_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        """Likewise for the user's memories."""
        ...

    def finish_embedder_switch(self, tenant: str, target: str, at: datetime) -> dict[str, int]:
        """In this transaction: the staged vectors replace the tenant's vectors (a turn or
        memory with none staged is left without, for the target to fill), the vectors of every
        other embedder are deleted (turns', memories', words'), the staging rows go, and
        ``target`` becomes active. Rows changed per table."""
        ...

    def cancel_embedder_switch(self, tenant: str) -> int:
        """Drop the build under way (its staged and word vectors); the active one stays.
        How many staged rows went."""
        ...


def may_serve(tenant: str, embedder: str) -> str:
    """SQL true when the tenant's serving vectors may come from ``embedder``: no switch made
    another one active (``tenant`` and ``embedder``: SQL expressions, e.g. a column or a mark)."""
    return (
        f"NOT EXISTS (SELECT 1 FROM embedder_switches s WHERE s.tenant_id = {tenant} "
        f"AND s.active IS NOT NULL AND s.active <> {embedder})"
    )


def may_build(tenant: str, embedder: str) -> str:
    """SQL true when ``embedder`` may write the tenant's word vectors: it serves, or is the
    target of the switch under way."""
    return (
        f"NOT EXISTS (SELECT 1 FROM embedder_switches s WHERE s.tenant_id = {tenant} "
        f"AND s.active IS NOT NULL AND s.active <> {embedder} "
        f"AND (s.target IS NULL OR s.target <> {embedder}))"
    )
