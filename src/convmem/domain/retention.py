"""A tenant's retention periods, applied layer by layer (``convmem.model.policy``), each through
the code path a user's own delete takes, so what a row took along goes with it.

- **transcripts**: conversations nothing was written to for that many days are deleted with
  everything derived from them (index, vectors, summaries, entity facts, evidence, jobs). The
  clock is the time convmem stored the conversation's newest message — the time inside its id
  — not the message's ``created_at``, which callers may set to any date (an import of old chats
  is kept for the period from the import on). Each conversation is checked again and deleted in
  the same transaction, so one that received a message a moment ago survives.
- **summaries** (with their state snapshots), **entities** (facts said before the cutoff; an
  entity left without facts goes) and **indexes** (the search rows and vectors of messages
  stored before it; the messages stay): derived rows, rebuilt from messages when needed.
- **memories**: records neither stored nor changed within the period go with their superseded
  versions (``delete_with_history``, the user's delete).
- **proposals**: suggestions (status ``proposed``) the user neither confirmed nor declined
  within the period of their last change are deleted (audited ``memory.proposal_expired``,
  reason ``retention``) — tenant-wide, so a user who stopped writing is swept too (the
  worker's consolidation expires proposals only of the users it visits).
- **audit**: events older than the period.

Conversations and memories are audited one by one as a user's delete is (ids and the period,
under the actor ``retention``); each sweep of a tenant leaves one ``retention.swept`` event
with the counts per layer. No content is ever written. Every layer deletes in small batches
(the write lock is held briefly) and is idempotent: a second sweep at the same time deletes
nothing, so a sweep job that failed half way can simply run again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from convmem.domain.memories import audit, delete_with_history
from convmem.ids import floor_id
from convmem.model.policy import RetentionLayer, TenantPolicy
from convmem.model.principal import Principal
from convmem.store.base import ConversationRef, Store, WriteTxn
from convmem.store.retry import write_retried

RETENTION_ACTOR = "retention"
# the audit event a sweep of a tenant leaves (its ``user_id`` is empty: it is the tenant's)
SWEPT_ACTION = "retention.swept"
# the one audit event a tenant's erase leaves (its ``user_id`` is empty: it is the tenant's)
TENANT_ERASED_ACTION = "tenant.erased"

_BATCH = 100  # rows per write transaction: the lock is held briefly


def delete_conversation(tx: WriteTxn, who: Principal, conversation_id: str, **why: Any) -> None:
    """Delete a conversation with everything derived from it; the audit keeps that it was
    deleted, by whom and when (and ``why``), never what it said."""
    tx.delete_conversation(who.tenant, conversation_id)
    audit(tx, who, "conversation.deleted", "conversation", conversation_id, **why)


def erase_tenant(tx: WriteTxn, tenant: str, actor: str) -> dict[str, int]:
    """Delete everything of a tenant (an operator's act: a customer leaves): every user's data
    with what was derived from it, the tool registry, keys, policy, jobs and audit. One event
    stays, under the tenant: that it was erased, by whom and when, and how many rows went."""
    counts = tx.delete_tenant(tenant)
    audit(tx, Principal(tenant, "", actor), TENANT_ERASED_ACTION, "tenant", tenant,
          rows=sum(counts.values()))  # fmt: skip
    return counts


def apply_retention(store: Store, now: datetime | None = None) -> dict[str, int]:
    """Sweep every tenant with a retention period; the conversations deleted per tenant (those
    with a transcripts period only, as this always returned)."""
    swept = sweep_all(store, now)
    return {t: counts["transcripts"] for t, counts in swept.items() if "transcripts" in counts}


def sweep_all(store: Store, now: datetime | None = None) -> dict[str, dict[str, int]]:
    """Sweep every tenant with a period on some layer: rows deleted per tenant and layer."""
    with store.read() as tx:
        policies = tx.tenant_policies()
    return {policy.tenant_id: sweep_tenant(store, policy, now) for policy in policies}


def sweep_tenant(store: Store, policy: TenantPolicy, now: datetime | None = None) -> dict[str, int]:
    """Apply one tenant's periods: rows deleted per layer that has one (in sweep order)."""
    now = now or datetime.now(UTC)
    counts: dict[str, int] = {}
    for layer, days in policy.retention.set().items():
        cutoff = now - timedelta(days=days)
        sweep = _SWEEPS[layer]
        if layer in _ONE_STATEMENT:
            counts[layer] = write_retried(store, sweep, policy.tenant_id, cutoff, days)
        else:
            counts[layer] = _until_done(store, sweep, policy.tenant_id, cutoff, days)
    if counts:
        write_retried(store, _record_sweep, policy.tenant_id, counts)
    return counts


def _record_sweep(tx: WriteTxn, tenant: str, counts: dict[str, int]) -> None:
    audit(tx, Principal(tenant, "", RETENTION_ACTOR), SWEPT_ACTION, "tenant", tenant, **counts)


_Batch = Callable[[WriteTxn, str, datetime, int], int]


def _until_done(store: Store, batch: _Batch, tenant: str, cutoff: datetime, days: int) -> int:
    total = 0
    while True:
        deleted = write_retried(store, batch, tenant, cutoff, days)
        total += deleted
        if deleted < _BATCH:
            return total


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _transcripts(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    # the prefixes the engine gives conversation and message ids
    at_ms = _ms(cutoff)
    stale: list[ConversationRef] = tx.conversations_written_before(
        tenant, floor_id("conv", at_ms), floor_id("msg", at_ms), _BATCH
    )
    for ref in stale:
        who = Principal(tenant, ref.user_id, RETENTION_ACTOR)
        delete_conversation(tx, who, ref.conversation_id, reason="retention",
                            retention_days=days)  # fmt: skip
    return len(stale)


def _summaries(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return tx.delete_summaries_before(tenant, cutoff, _BATCH)


def _entities(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return tx.delete_entity_facts_before(tenant, cutoff)


def _memories(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return _delete_untouched(tx, tenant, cutoff, days, None, "memory.deleted")


def _proposals(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return _delete_untouched(tx, tenant, cutoff, days, "proposed", "memory.proposal_expired")


def _delete_untouched(
    tx: WriteTxn, tenant: str, cutoff: datetime, days: int, status: str | None, action: str
) -> int:
    due = tx.memories_untouched_before(
        tenant, floor_id("mem", _ms(cutoff)), cutoff, _BATCH, status=status
    )
    by_user: dict[str, list[str]] = {}
    for ref in due:
        by_user.setdefault(ref.user_id, []).append(ref.memory_id)
    deleted = 0
    for user, memory_ids in by_user.items():
        who = Principal(tenant, user, RETENTION_ACTOR)
        deleted += len(delete_with_history(
            tx, who, memory_ids, action=action, reason="retention", retention_days=days
        ))  # fmt: skip
    return deleted


def _audit(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return tx.delete_audit_before(tenant, cutoff, _BATCH)


def _indexes(tx: WriteTxn, tenant: str, cutoff: datetime, days: int) -> int:
    return tx.delete_index_rows_before(tenant, floor_id("msg", _ms(cutoff)), _BATCH)


# the layers whose store primitive deletes every due row at once (no batches)
_ONE_STATEMENT: frozenset[RetentionLayer] = frozenset({"entities"})
_SWEEPS: dict[RetentionLayer, _Batch] = {
    "transcripts": _transcripts,
    "summaries": _summaries,
    "entities": _entities,
    "memories": _memories,
    "proposals": _proposals,
    "audit": _audit,
    "indexes": _indexes,
}
