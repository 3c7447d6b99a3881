"""The storage boundary: a backend is a ``Store`` handing out transactions whose methods are the
capability Protocols of this package. Everything that touches a database goes through them.

=====================================  ==========================================================
``convmem.store.conversations``        ``ConversationReads`` / ``ConversationWrites``: the
                                       conversations, their message trees, pins
``convmem.store.memories``             ``MemoryReads`` / ``MemoryWrites``: memories, audit, the
                                       user's memory switch
``convmem.store.derived``              ``SummaryReads``/``Writes``, ``JobReads``/``Writes`` (the
                                       lease semantics), ``AssemblyReads``/``Writes``
``convmem.store.search_index``         ``IndexReads`` / ``IndexWrites``: index rows, vocabulary,
                                       vectors, rebuild and backfill
``convmem.store.ranking``              ``RankedSearch``: ranked candidates under scope filters
``convmem.store.keys``                 ``KeyReads``/``Writes``, ``TenantPolicyReads``/``Writes``
``convmem.store.users``                ``UserDataReads`` / ``UserDataWrites``: export, delete-all
``convmem.store.limits``               ``TimeLimitedReads``: a stretch of reads that stops at a
                                       deadline and leaves the transaction usable
``convmem.store.tools``                ``ToolReads`` / ``ToolWrites``: each tenant's tool registry
``convmem.store.entities``             ``EntityReads`` / ``EntityWrites``: each user's entities
                                       and their facts (derived from messages)
``convmem.store.lifecycle``            ``LifecycleReads`` / ``LifecycleWrites``: retention
                                       sweeps per layer, a proposal's evidence
``convmem.store.idempotency``          ``IdempotencyReads`` / ``IdempotencyWrites``: the writes
                                       kept under the callers' idempotency keys
``convmem.store.embedder_switch``      ``EmbedderSwitchReads`` / ``EmbedderSwitchWrites``: a
                                       tenant's embedder changed while searches go on
=====================================  ==========================================================

``read()`` gives a consistent snapshot; ``write()`` an atomic transaction in which what the
engine reads and then writes cannot change under it (see each Protocol for the unit that must be
serialised: appends per conversation, job claims per job). Failures surface as ``StoreError``
(``StoreBusy`` when the backend gave up waiting for a lock) — never as a driver's exception. The
engine puts the rules (tree validation, token counting, never-store, ranking fusion) around
these primitives, so every backend shares them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from convmem.store.conversations import (
    BranchRow,
    ConversationReads,
    ConversationRef,
    ConversationWrites,
    MessageCost,
    MessageRow,
    PinnedInstruction,
)
from convmem.store.derived import (
    AssemblyReads,
    AssemblyWrites,
    JobReads,
    JobWrites,
    SummaryReads,
    SummaryWrites,
)
from convmem.store.embedder_switch import (
    EmbedderSwitch,
    EmbedderSwitchReads,
    EmbedderSwitchWrites,
    StagedCounts,
    UnstagedMemory,
)
from convmem.store.entities import EntityReads, EntityRow, EntityTurnRow, EntityWrites
from convmem.store.idempotency import IdempotencyReads, IdempotencyWrites, KeptWrite
from convmem.store.keys import (
    KeyReads,
    KeyWrites,
    PageSessionReads,
    PageSessionWrites,
    StoredKey,
    TenantPolicyReads,
    TenantPolicyWrites,
)
from convmem.store.lifecycle import LifecycleReads, LifecycleWrites, MemoryRef
from convmem.store.limits import TimeLimitedReads
from convmem.store.memories import UNCHANGED, MemoryReads, MemoryUpdate, MemoryWrites
from convmem.store.ranking import MemoryHitRow, MessageHitRow, RankedSearch, Window
from convmem.store.search_index import (
    EmbeddedTurn,
    IndexedBody,
    IndexedRow,
    IndexEntry,
    IndexReads,
    IndexWrites,
    MemoryVector,
    MessageVector,
    MissingMemoryVector,
    MissingMessageVector,
    MissingTermVector,
    TermVector,
    UnindexedMessage,
    Vector,
)
from convmem.store.tools import ToolReads, ToolWrites
from convmem.store.users import UserDataReads, UserDataWrites

__all__ = [
    "UNCHANGED",
    "AssemblyReads",
    "AssemblyWrites",
    "BranchRow",
    "EmbeddedTurn",
    "EntityReads",
    "EntityRow",
    "EntityTurnRow",
    "EntityWrites",
    "ConversationReads",
    "ConversationRef",
    "ConversationWrites",
    "EmbedderSwitch",
    "EmbedderSwitchReads",
    "EmbedderSwitchWrites",
    "IdempotencyReads",
    "IdempotencyWrites",
    "IndexEntry",
    "IndexReads",
    "IndexWrites",
    "IndexedBody",
    "IndexedRow",
    "JobReads",
    "JobWrites",
    "KeptWrite",
    "StagedCounts",
    "UnstagedMemory",
    "KeyReads",
    "KeyWrites",
    "PageSessionReads",
    "PageSessionWrites",
    "LifecycleReads",
    "LifecycleWrites",
    "MemoryHitRow",
    "MemoryReads",
    "MemoryRef",
    "MemoryUpdate",
    "MemoryVector",
    "MemoryWrites",
    "MessageCost",
    "MessageHitRow",
    "MessageRow",
    "MessageVector",
    "MissingMemoryVector",
    "MissingMessageVector",
    "MissingTermVector",
    "PinnedInstruction",
    "RankedSearch",
    "ReadTxn",
    "Store",
    "StoredKey",
    "SummaryReads",
    "SummaryWrites",
    "TenantPolicyReads",
    "TenantPolicyWrites",
    "TermVector",
    "TimeLimitedReads",
    "ToolReads",
    "ToolWrites",
    "UnindexedMessage",
    "UserDataReads",
    "UserDataWrites",
    "Vector",
    "Window",
    "WriteTxn",
]


class ReadTxn(
    ConversationReads,
    MemoryReads,
    SummaryReads,
    JobReads,
    AssemblyReads,
    IndexReads,
    RankedSearch,
    KeyReads,
    PageSessionReads,
    TenantPolicyReads,
    UserDataReads,
    TimeLimitedReads,
    ToolReads,
    EntityReads,
    LifecycleReads,
    IdempotencyReads,
    EmbedderSwitchReads,
    Protocol,
):
    """Every read capability, over one consistent snapshot."""


class WriteTxn(
    ReadTxn,
    ConversationWrites,
    MemoryWrites,
    SummaryWrites,
    JobWrites,
    AssemblyWrites,
    IndexWrites,
    KeyWrites,
    PageSessionWrites,
    TenantPolicyWrites,
    UserDataWrites,
    ToolWrites,
    EntityWrites,
    LifecycleWrites,
    IdempotencyWrites,
    EmbedderSwitchWrites,
    Protocol,
):
    """Every capability, in one atomic transaction."""


class Store(Protocol):
    """A storage backend: the extension point a new database plugs in through (register a
    factory for its URL scheme with ``convmem.store.registry.register``)."""

    def read(self) -> AbstractContextManager[ReadTxn]: ...

    def write(self) -> AbstractContextManager[WriteTxn]: ...

    @property
    def reindex_needed(self) -> bool:
        """True when messages exist that the search index was never built for (a database
        from before the index): the engine then rebuilds it on open."""
        ...

    def refresh_statistics(self) -> None:
        """After a bulk load (an import): bring the query planner's statistics of the tables it
        filled up to date, so the first requests on the new rows are planned for them."""
        ...

    def close(self) -> None: ...
