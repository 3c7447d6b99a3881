"""What the lifecycle of stored rows needs beyond the other Protocols: the retention sweeps'
primitives per layer, and the evidence a consolidated proposal cites.

Semantics every backend keeps:

- Each sweep primitive deletes at most ``limit`` rows of one tenant older than its cutoff and
  returns how many it deleted; called again it finds what is left, so a sweep is repeated until
  a call deletes fewer than ``limit`` and running it twice deletes nothing more (idempotent).
- ``delete_index_rows_before`` removes the index rows (full text and vectors) of messages whose
  id sorts below ``message_cutoff`` — ids are ULIDs, so that is the time convmem stored them —
  and never the messages.
- Evidence rows are ids only (a memory's id and the messages it was drawn from). They go with
  their message (``ConversationWrites.delete_messages``/``delete_conversation``), with their
  memory (``MemoryWrites.delete_memories``) and with the user (``UserDataWrites.delete_user``);
  a rejected proposal keeps its evidence, so the statements it cites are not proposed again.
  A *proposal* citing a deleted message goes with it (``convmem.store.lineage``); a memory the
  user confirmed or declined keeps the rest of its evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from convmem.model.messages import Message
from convmem.model.policy import DEFAULT_SENSITIVE_PURPOSES, RetentionPeriods, TenantPolicy


@dataclass(frozen=True)
class WriterRef:
    """A user who wrote a user turn in the range scanned, with the newest such turn's id."""

    tenant_id: str
    user_id: str
    last_message_id: str


@dataclass(frozen=True)
class MemoryRef:
    """A memory named with its owner (what a sweep needs to delete and audit it)."""

    user_id: str
    memory_id: str


class LifecycleReads(Protocol):
    def recent_writers(self, after_id: str, limit: int) -> list[WriterRef]:
        """Across tenants (the worker's scan, never a request): the users among the first
        ``limit`` user turns stored after ``after_id`` (message ids sort by the time convmem
        stored them)."""
        ...

    def user_turns_after(self, tenant: str, user: str, after_id: str, limit: int) -> list[Message]:
        """The user's own turns (role ``user``) stored after ``after_id`` in conversations that
        are not temporary, oldest first, at most ``limit``."""
        ...

    def memories_untouched_before(
        self, tenant: str, id_cutoff: str, updated_before: datetime, limit: int,
        status: str | None = None,
    ) -> list[MemoryRef]:  # fmt: skip
        """A tenant's memories (any status, or only ``status``) stored before ``id_cutoff`` (an
        id floor) and not changed since ``updated_before``, oldest first."""
        ...

    def memory_evidence(
        self, tenant: str, user: str, memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """The message ids each of the user's memories cites, in the order they were added."""
        ...

    def evidenced_messages(self, tenant: str, user: str, message_ids: Sequence[str]) -> set[str]:
        """Which of these messages some memory of the user (any status) already cites."""
        ...


class LifecycleWrites(Protocol):
    def delete_summaries_before(self, tenant: str, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` of the tenant's summaries (snapshots included) made before
        ``before``."""
        ...

    def delete_audit_before(self, tenant: str, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` of the tenant's audit events that happened before ``before``."""
        ...

    def delete_index_rows_before(self, tenant: str, message_cutoff: str, limit: int) -> int:
        """Delete up to ``limit`` index rows of messages stored before the cutoff id."""
        ...

    def add_memory_evidence(
        self, tenant: str, user: str, memory_id: str, message_ids: Sequence[str]
    ) -> None:
        """Record that the memory cites these messages of the user (repeats are ignored)."""
        ...


# --- rows (shared by the backends: one column order) ----------------------------------------------

# ``retention_days`` is the transcripts' period: the column predates the other layers
POLICY_COLUMNS = (
    "tenant_id, memory_disabled, retention_days, summaries_days, entities_days, "
    "memories_days, audit_days, indexes_days, proposals_days, recall_unconfirmed_entity_facts, "
    "sensitive_categories, sensitive_purposes, max_pending_proposals"
)
# the columns after the tenant an upsert replaces (every one: a policy is set whole)
POLICY_UPDATED = tuple(c.strip() for c in POLICY_COLUMNS.split(",")[1:])
# a tenant has some retention when any of these is set
ANY_PERIOD = (
    "(retention_days IS NOT NULL OR summaries_days IS NOT NULL OR entities_days IS NOT NULL "
    "OR memories_days IS NOT NULL OR audit_days IS NOT NULL OR indexes_days IS NOT NULL "
    "OR proposals_days IS NOT NULL)"
)


def _names(value: str | None) -> tuple[str, ...]:
    return () if not value else tuple(v for v in value.split(",") if v)


def policy_from_row(row: Sequence[Any]) -> TenantPolicy:
    days = [None if value is None else int(value) for value in row[2:9]]
    return TenantPolicy(
        row[0], bool(row[1]), RetentionPeriods(*days), bool(row[9]),
        sensitive_categories=_names(row[10]),
        sensitive_purposes=DEFAULT_SENSITIVE_PURPOSES if row[11] is None else _names(row[11]),
        max_pending_proposals=None if row[12] is None else int(row[12]),
    )  # fmt: skip


def policy_values(policy: TenantPolicy) -> tuple[Any, ...]:
    """The values of ``POLICY_COLUMNS`` after the tenant and the switch (names are
    comma-separated: none holds a comma)."""
    r = policy.retention
    return (
        r.transcripts, r.summaries, r.entities, r.memories, r.audit, r.indexes, r.proposals,
        policy.recall_unconfirmed_entity_facts, ",".join(policy.sensitive_categories) or None,
        ",".join(policy.sensitive_purposes), policy.max_pending_proposals,
    )  # fmt: skip
