"""A tenant's retention period, applied: conversations nothing was written to for that many days
are deleted, with everything derived from them (index, vectors, summaries, jobs).

The clock is the time convmem stored the conversation's newest message — the time inside its id
— not the message's ``created_at``, which callers may set to any date (an import of old chats is
kept for the period from the import on). Long-term memories are not touched: they are the user's
explicit records with their own expiry and controls. Each conversation is checked again and
deleted in the same transaction, so one that received a message a moment ago survives. The audit
records each deletion (ids and the period, no content) under the actor ``retention``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from convmem.ids import floor_id
from convmem.memories import audit
from convmem.model.principal import Principal
from convmem.store.base import ConversationRef, Store, WriteTxn
from convmem.store.retry import write_retried

RETENTION_ACTOR = "retention"


def delete_conversation(tx: WriteTxn, who: Principal, conversation_id: str, **why: Any) -> None:
    """Delete a conversation with everything derived from it; the audit keeps that it was
    deleted, by whom and when (and ``why``), never what it said."""
    tx.delete_conversation(who.tenant, conversation_id)
    audit(tx, who, "conversation.deleted", "conversation", conversation_id, **why)


_BATCH = 100  # conversations per write transaction: the lock is held briefly


def apply_retention(store: Store, now: datetime | None = None) -> dict[str, int]:
    """Delete every tenant's conversations older than its retention period. Returns the number
    deleted per tenant (tenants with a period only)."""
    now = now or datetime.now(UTC)
    with store.read() as tx:
        policies = tx.retention_policies()
    deleted: dict[str, int] = {}
    for policy in policies:
        tenant, days = policy.tenant_id, policy.retention_days
        at_ms = int((now - timedelta(days=days)).timestamp() * 1000)
        # the prefixes the engine gives conversation and message ids
        cutoffs = floor_id("conv", at_ms), floor_id("msg", at_ms)
        deleted[tenant] = 0
        while True:
            stale = write_retried(store, _delete_batch, tenant, cutoffs, days)
            deleted[tenant] += len(stale)
            if len(stale) < _BATCH:
                break
    return deleted


def _delete_batch(
    tx: WriteTxn, tenant: str, cutoffs: tuple[str, str], days: int
) -> list[ConversationRef]:
    stale = tx.conversations_written_before(tenant, *cutoffs, _BATCH)
    for ref in stale:
        who = Principal(tenant, ref.user_id, RETENTION_ACTOR)
        delete_conversation(tx, who, ref.conversation_id, reason="retention",
                            retention_days=days)  # fmt: skip
    return stale
