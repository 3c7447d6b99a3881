"""The storage boundary. Everything that touches a database goes through these Protocols.

A backend hands out transactions: ``read()`` gives a consistent snapshot, ``write()`` an exclusive,
atomic one (reading the active leaf, inserting and moving the leaf happen in one). The engine puts
the rules (tree validation, token counting) around these primitives, so every backend shares them.
Every method takes the tenant; methods that find objects by id take the user too and raise
``NotFound`` for another principal's ids exactly as for ids that do not exist.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from convmem.model.conversation import ConversationRecord
from convmem.model.keys import ApiKey, AssemblyRecord
from convmem.model.memory import AuditEvent, MemoryRecord
from convmem.model.messages import Message
from convmem.model.summary import Job, SummaryRecord


@dataclass(frozen=True)
class BranchRow:
    """A message on a branch with its stored costs (``tokens`` is None if not counted)."""

    message: Message
    tokens: int | None
    estimate_tokens: int
    estimate_before: int


@dataclass(frozen=True)
class PinnedInstruction:
    id: str
    text: str
    conversation_id: str | None
    position: int
    created_at: datetime


@dataclass(frozen=True)
class MessageRow:
    """Everything the store needs to insert one message: the message and its stored extras."""

    message: Message
    revision_of: str | None
    revision_kind: str | None
    tokens: Mapping[str, int]
    estimate_tokens: int
    estimate_before: int


class SummaryReads(Protocol):
    """Derived summaries, found by key (their through-message) or as ancestor candidates."""

    def summary_through(
        self, tenant: str, message_id: str, summarizer: str, prompt_version: str
    ) -> SummaryRecord | None: ...

    def summaries_above(
        self,
        tenant: str,
        conversation_id: str,
        summarizer: str,
        prompt_version: str,
        *,
        below_depth: int,
        limit: int,
    ) -> list[SummaryRecord]:
        """The conversation's summaries above a depth, deepest first (ancestor candidates)."""
        ...

    def conversation_summaries(self, tenant: str, conversation_id: str) -> list[SummaryRecord]: ...

    def path_ids(self, tenant: str, message_id: str, count: int) -> list[str]:
        """Ids of ``message_id`` and up to ``count - 1`` of its ancestors, newest first."""
        ...

    def find_job(self, tenant: str, key: str) -> Job | None: ...

    def get_job(self, job_id: str) -> Job: ...

    def list_jobs(self, status: str | None, limit: int) -> list[Job]: ...


class SummaryWrites(Protocol):
    def insert_summary(self, tenant: str, user: str, record: SummaryRecord) -> bool:
        """False when a summary with the same key exists already (it is kept)."""
        ...

    def delete_summary(self, tenant: str, summary_id: str) -> None: ...

    def enqueue_job(self, job: Job) -> bool:
        """False when a job with the same key exists already: enqueueing is idempotent."""
        ...

    def claim_job(
        self, owner: str, now: float, lease_seconds: float, kinds: Sequence[str]
    ) -> Job | None: ...

    def extend_lease(self, job_id: str, owner: str, until: float) -> bool: ...

    def finish_job(self, job_id: str, owner: str, note: str | None = None) -> bool: ...

    def fail_job(self, job_id: str, owner: str, error: str, retry_at: float | None) -> None: ...

    def retry_job(self, job_id: str, now: float) -> None: ...


@dataclass(frozen=True)
class IndexEntry:
    """A message's row in the search index; derived from the message, rebuildable."""

    message_id: str
    conversation_id: str
    depth: int
    created_at: datetime
    speaker: str
    session: str | None
    body: str
    ctx: str
    embedder: str | None = None
    vector: bytes | None = None


@dataclass(frozen=True)
class IndexedRow:
    """What neighbour context needs to know of an indexed message."""

    message_id: str
    speaker: str
    session: str | None
    created_at: datetime
    body: str
    depth: int
    parent_id: str | None


@dataclass(frozen=True)
class VectorRow:
    message_id: str
    speaker: str
    depth: int
    created_at: datetime
    vector: bytes


@dataclass(frozen=True)
class MessageHitRow:
    message_id: str
    speaker: str
    score: float


class ReadTxn(SummaryReads, Protocol):
    def get_conversation(
        self, tenant: str, user: str, conversation_id: str
    ) -> ConversationRecord: ...

    def list_conversations(
        self, tenant: str, user: str, *, limit: int, offset: int
    ) -> list[ConversationRecord]: ...

    def get_message(self, tenant: str, user: str, message_id: str) -> Message: ...

    def get_messages(
        self, tenant: str, user: str, message_ids: Sequence[str]
    ) -> dict[str, Message]:
        """The principal's messages among ``message_ids``, by id, in one read (unknown ids and
        other principals' are left out)."""
        ...

    def get_branch_row(self, tenant: str, user: str, message_id: str) -> BranchRow: ...

    def children(
        self, tenant: str, conversation_id: str, parent_id: str | None
    ) -> list[Message]: ...

    def conversation_messages(self, tenant: str, conversation_id: str) -> list[Message]: ...

    def branch(self, tenant: str, leaf_id: str, tokenizer: str) -> Iterator[BranchRow]:
        """The path from ``leaf_id`` to the root, newest first, fetched lazily in pages."""
        ...

    def pinned(
        self, tenant: str, user: str, conversation_id: str | None
    ) -> list[PinnedInstruction]:
        """User-wide pins, then (with a conversation) that conversation's pins, in order."""
        ...

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord: ...

    def list_memories(
        self,
        tenant: str,
        user: str,
        *,
        statuses: Sequence[str] | None = None,
        category: str | None = None,
        scopes: Sequence[str] | None = None,
        subject_key: str | None = None,
        unexpired_at: datetime | None = None,
        unconflicted: bool = False,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[MemoryRecord]: ...

    def search_memory_terms(
        self,
        tenant: str,
        user: str,
        terms: Sequence[str],
        *,
        scopes: Sequence[str],
        now: datetime,
        limit: int,
    ) -> list[tuple[MemoryRecord, float]]:
        """Current memories matching any of ``terms``, best first; filters in the query."""
        ...

    def memory_vectors(
        self, tenant: str, user: str, embedder: str, *, scopes: Sequence[str], now: datetime
    ) -> list[tuple[MemoryRecord, bytes]]:
        """Current memories (filtered as above) with their vectors from ``embedder``."""
        ...

    def search_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        *,
        limit: int,
        max_depth: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHitRow]:
        """One conversation's indexed turns matching any of ``terms``, best first."""
        ...

    def message_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str
    ) -> list[VectorRow]:
        """One conversation's turns with a vector from ``embedder``."""
        ...

    def search_generation(self, tenant: str, conversation_id: str) -> int | None:
        """A number that changes whenever the conversation's vectors or vocabulary change."""
        ...

    def indexed_rows(self, tenant: str, message_ids: Sequence[str]) -> dict[str, IndexedRow]: ...

    def latest_indexed_child(
        self, tenant: str, conversation_id: str, parent_id: str
    ) -> str | None: ...

    def indexed_bodies(self, tenant: str, conversation_id: str) -> list[tuple[str, str]]: ...

    def unindexed_messages(self, after: int, limit: int) -> list[tuple[int, str, str, str]]:
        """(position, tenant, user, message id) of messages past position ``after`` that may
        lack an index row, in write order; pass the last position back to go on."""
        ...

    def on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> set[str]:
        """The candidates that are ``start_id`` or one of its ancestors."""
        ...

    def conversation_speakers(self, tenant: str, conversation_id: str) -> list[str]: ...

    def term_vectors(
        self, tenant: str, conversation_id: str, embedder: str
    ) -> list[tuple[str, bytes]]: ...

    def stored_term_vectors(
        self, tenant: str, embedder: str, words: Sequence[str]
    ) -> dict[str, bytes]: ...

    def missing_message_vectors(self, embedder: str, limit: int) -> list[tuple[str, str, str]]: ...

    def missing_term_vectors(self, embedder: str, limit: int) -> list[tuple[str, str]]: ...

    def missing_memory_vectors(
        self, embedder: str, limit: int
    ) -> list[tuple[str, str, str, str]]: ...

    def list_audit(self, tenant: str, user: str) -> list[AuditEvent]: ...

    def memory_enabled(self, tenant: str, user: str) -> bool: ...

    def tenant_memory_disabled(self, tenant: str) -> bool: ...

    def retention_policies(self) -> list[tuple[str, int]]:
        """(tenant, retention days) of every tenant that set a retention period."""
        ...

    def conversations_written_before(
        self, tenant: str, conversation_cutoff: str, message_cutoff: str, limit: int
    ) -> list[tuple[str, str]]:
        """(user, conversation id) of a tenant's conversations created before
        ``conversation_cutoff`` with no message at or after ``message_cutoff`` (ids are ULIDs:
        they sort by the time they were made)."""
        ...

    def export_user(self, tenant: str, user: str) -> dict[str, list[dict[str, Any]]]: ...

    def find_api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        """A key and its secret's SHA-256 (hex) by id alone: a presented key names no tenant."""
        ...

    def list_api_keys(self, tenant: str) -> list[ApiKey]: ...

    def last_assembly(
        self, tenant: str, user: str, conversation_id: str
    ) -> AssemblyRecord | None: ...


class WriteTxn(ReadTxn, SummaryWrites, Protocol):
    def insert_conversation(self, tenant: str, record: ConversationRecord) -> None: ...

    def insert_message(self, tenant: str, user: str, row: MessageRow) -> None: ...

    def set_active_leaf(self, tenant: str, conversation_id: str, leaf_id: str | None) -> None: ...

    def subtree_ids(self, tenant: str, message_id: str) -> list[str]: ...

    def delete_messages(self, tenant: str, message_ids: Sequence[str]) -> None:
        """Delete the messages and what was derived from them (summaries through them, jobs)."""
        ...

    def delete_conversation(self, tenant: str, conversation_id: str) -> None: ...

    def insert_pinned(self, tenant: str, user: str, pin: PinnedInstruction) -> None: ...

    def delete_pinned(self, tenant: str, user: str, pin_id: str) -> None: ...

    def insert_memory(self, tenant: str, record: MemoryRecord) -> None: ...

    def set_memory_fields(self, tenant: str, memory_id: str, **fields: Any) -> None:
        """Set columns of one record; setting ``text`` also drops the vectors derived from it."""
        ...

    def delete_memories(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None: ...

    def insert_audit(self, tenant: str, event: AuditEvent) -> None: ...

    def set_memory_enabled(self, tenant: str, user: str, enabled: bool, at: datetime) -> None: ...

    def set_tenant_policy(
        self, tenant: str, *, memory_disabled: bool, retention_days: int | None, at: datetime
    ) -> None: ...

    def insert_api_key(self, tenant: str, key: ApiKey, secret_sha256: str) -> None: ...

    def revoke_api_key(self, tenant: str, key_id: str, at: datetime) -> ApiKey:
        """Mark the tenant's key revoked (``NotFound`` for another tenant's); returns it."""
        ...

    def put_last_assembly(self, tenant: str, user: str, record: AssemblyRecord) -> None: ...
    def index_message(self, tenant: str, user: str, entry: IndexEntry) -> None: ...

    def set_index_context(self, tenant: str, message_id: str, ctx: str) -> None: ...

    def set_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[tuple[str, bytes]]
    ) -> None: ...

    def add_terms(
        self, tenant: str, conversation_id: str, words: Sequence[str], speakers: Sequence[str]
    ) -> None: ...

    def retain_terms(
        self, tenant: str, conversation_id: str, words: set[str], speakers: set[str]
    ) -> None: ...

    def set_term_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[tuple[str, bytes]]
    ) -> None: ...

    def bump_conversations_using(self, tenant: str, words: Sequence[str]) -> None: ...

    def set_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[tuple[str, bytes]]
    ) -> None: ...

    def delete_user(self, tenant: str, user: str) -> dict[str, int]:
        """Every row of the user's data except the audit, which holds no content."""
        ...


class Store(Protocol):
    """A storage backend."""

    def read(self) -> AbstractContextManager[ReadTxn]: ...

    def write(self) -> AbstractContextManager[WriteTxn]: ...

    def close(self) -> None: ...
