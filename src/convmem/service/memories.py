"""``/v1/memories``: what convmem remembers about the principal, and the user's controls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from convmem.errors import NeverStoreViolation
from convmem.model.memory import MemoryNotice
from convmem.service.auth import ActingScope
from convmem.service.convert import hit, notice
from convmem.service.params import IdempotencyKey, search_headers
from convmem.service.schemas import (
    SCOPE_PATTERN,
    Category,
    DeletedOut,
    EvidenceOut,
    MemoryCreate,
    MemoryHitOut,
    MemoryOut,
    MemoryStatus,
    MemoryUpdate,
    NoticeOut,
    PurposeName,
    ReplacementQuery,
    UndoneOut,
)

router = APIRouter(prefix="/v1/memories", tags=["memories"])
MemoryId = Annotated[str, Path(min_length=1, max_length=256)]


def written(result: MemoryNotice) -> dict[str, Any]:
    # a write the policy refused is an error over HTTP: nothing was stored
    if result.status == "blocked":
        raise NeverStoreViolation(result.reason or "blocked")
    return notice(result)


def _save(
    save: Callable[..., MemoryNotice], body: MemoryCreate, idempotency_key: str | None
) -> dict[str, Any]:
    result = save(
        body.text,
        idempotency_key=idempotency_key,
        category=body.category,
        subject=body.subject,
        scope=body.scope,
        purpose=body.purpose,
        expires_at=body.expires_at,
        source_message_id=body.source_message_id,
        confidence=body.confidence,
        strict=True,
    )
    return written(result)


@router.get("", response_model=list[MemoryOut])
def list_memories(
    scope: ActingScope,
    status: Annotated[
        list[MemoryStatus] | None,
        Query(description="Statuses to list (repeatable); default: confirmed and proposed."),
    ] = None,
    category: Category | None = None,
    memory_scope: Annotated[
        str | None, Query(alias="scope", min_length=1, max_length=256, pattern=SCOPE_PATTERN)
    ] = None,
    include_expired: bool = False,
) -> list[dict[str, Any]]:
    """The principal's memories, oldest first."""
    records = scope.memories.list(
        status=tuple(status) if status else ("confirmed", "proposed"),
        category=category,
        scope=memory_scope,
        include_expired=include_expired,
    )
    return [record.to_dict() for record in records]


@router.post("", status_code=201, response_model=NoticeOut)
def remember(
    body: MemoryCreate, scope: ActingScope, idempotency_key: IdempotencyKey = None
) -> dict[str, Any]:
    """Save a statement the user asked to keep. A refused one (never-store policy, memory off)
    is a 422 ``never_store`` problem with the reason code; nothing is written."""
    return _save(scope.remember, body, idempotency_key)


@router.post("/proposals", status_code=201, response_model=NoticeOut)
def propose(
    body: MemoryCreate, scope: ActingScope, idempotency_key: IdempotencyKey = None
) -> dict[str, Any]:
    """Record an inference as a proposal: never recalled until the user confirms it. It
    carries ``confidence`` (default 0.5) and the basis ``application``; beyond the tenant's
    ``max_pending_proposals`` it replaces a less confident pending one, or is refused (422,
    reason ``proposal_cap``). A special category is never proposed (422, its reason)."""
    return _save(scope.propose, body, idempotency_key)


@router.get("/search", response_model=list[MemoryHitOut])
def search_memories(
    scope: ActingScope,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    response: Response,
    k: Annotated[int, Query(ge=1, le=100)] = 5,
    purpose: Annotated[
        list[PurposeName] | None,
        Query(
            description="Only memories of these purposes (repeatable); default: every purpose "
            "the key and the route allow."
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """Current memories ranked for ``q``; none when memory is off. ``X-Convmem-Unembedded``
    says how many of the user's memories had no vector yet (ranked by words only)."""
    hits = scope.search_memories(q, k=k, purposes=purpose)
    search_headers(response, hits.unembedded, hits.degraded)
    return [hit(found) for found in hits]


@router.get("/{memory_id}", response_model=MemoryOut)
def get_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    return scope.memories.get(memory_id).to_dict()


@router.get("/{memory_id}/evidence", response_model=EvidenceOut)
def memory_evidence(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """The ids of the turns a memory was drawn from (a consolidated proposal cites each turn
    that said it), oldest first."""
    return {"memory_id": memory_id, "message_ids": scope.memories.evidence(memory_id)}


@router.patch("/{memory_id}", response_model=NoticeOut)
def update_memory(memory_id: MemoryId, body: MemoryUpdate, scope: ActingScope) -> dict[str, Any]:
    """New text: a new record supersedes the old one (kept in the history as superseded)."""
    return written(scope.memories.update(memory_id, body.text))


@router.delete("/{memory_id}", response_model=DeletedOut)
def delete_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Hard-delete a memory and its superseded versions; the audit keeps only that it happened."""
    return {"deleted_ids": scope.memories.delete(memory_id)}


@router.post("/{memory_id}/confirm", response_model=MemoryOut)
def confirm_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Accept a proposal: it becomes a confirmed memory and may be recalled."""
    return scope.memories.confirm(memory_id).to_dict()


@router.post("/{memory_id}/reject", response_model=MemoryOut)
def reject_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Decline a proposal: it is never recalled."""
    scope.memories.reject(memory_id)
    return scope.memories.get(memory_id).to_dict()


@router.post("/{memory_id}/restore", response_model=MemoryOut)
def restore_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Undo the change that superseded this memory: it is current again with everything else
    that change replaced, and the memory that replaced them goes (or is a suggestion again)."""
    return scope.memories.restore(memory_id).to_dict()


@router.post("/{memory_id}/replaces", response_model=list[MemoryOut])
def replaced_by_change(
    memory_id: MemoryId, scope: ActingScope, body: ReplacementQuery | None = None
) -> list[dict[str, Any]]:
    """The current memories that confirming this suggestion (no text) or editing it to
    ``text`` would replace: ask the user, with both texts, before the change. (A POST so the
    text stays out of URLs and logs; nothing is written.)"""
    text = None if body is None else body.text
    return [m.to_dict() for m in scope.memories.would_replace(memory_id, text)]


@router.post("/{memory_id}/undo", response_model=UndoneOut)
def undo_change(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Undo the change that made this memory current — a save, an edit (its new memory) or a
    confirmation: what it replaced is current again; a confirmed suggestion is a suggestion
    again, a saved or edited text is deleted."""
    undone = scope.memories.undo(memory_id)
    return {
        "memory": None if undone.memory is None else undone.memory.to_dict(),
        "restored": [m.to_dict() for m in undone.restored],
    }


@router.post("/{memory_id}/resolve", response_model=MemoryOut)
def resolve_memory(memory_id: MemoryId, scope: ActingScope) -> dict[str, Any]:
    """Settle a flagged conflict: keep this record, supersede the one it conflicts with."""
    return scope.memories.resolve(memory_id).to_dict()
