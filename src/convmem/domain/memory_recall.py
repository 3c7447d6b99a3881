"""The memories a request carries: the block ahead of the history (held whole while small, so
the cached prefix holds) and the ones ranked for the message, late in the request."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from convmem.domain.search import search_memories, sensitive_recall
from convmem.model.memory import MemoryRecord
from convmem.model.policy import TenantPolicy
from convmem.model.principal import Principal
from convmem.retrieval.rerank import Reranker
from convmem.retrieval.vector import Embedder
from convmem.store.base import ReadTxn


def _now() -> datetime:
    return datetime.now(UTC)


def recall_candidates(
    tx: ReadTxn,
    who: Principal,
    query: str,
    *,
    k: int,
    scopes: Sequence[str],
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    policy: TenantPolicy | None = None,
) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """Memories for the request: (the block's, most recently updated first; the ones ranked for
    the message, best first). The block sits ahead of the history, so a block that moved with
    every message would take the cached prefix after it along (ranked per message, a chat with
    20 memories changed its block on 41 of 59 turns): it holds the set whole when the set has at
    most ``k``, else its ``k`` most recent. Only a larger set is ranked for the message; those
    go late in the request, where they may change freely. Both read only memories of the
    purposes ``who`` may use, and of the special categories the tenant opened only those of
    its named purposes (``sensitive_recall``; ``policy``: the tenant's, when the caller read it
    already). A ``reranker`` orders the ranked ones (the block's order is recency, kept for the
    prompt cache)."""
    policy = policy if policy is not None else tx.tenant_policy(who.tenant)
    current = tx.list_memories(who.tenant, who.user, statuses=("confirmed",), scopes=scopes,
                               purposes=who.purposes, unexpired_at=_now(), unconflicted=True,
                               newest_first=True, limit=k + 1,
                               sensitive=sensitive_recall(tx, who, policy))  # fmt: skip
    if len(current) <= k or not query.strip():
        return current[:k], []
    hits = search_memories(
        tx, who, query, 2 * k, scopes=scopes, now=_now(), embedder=embedder, reranker=reranker,
        policy=policy,
    )  # fmt: skip
    return current[:k], [hit.memory for hit in hits]
