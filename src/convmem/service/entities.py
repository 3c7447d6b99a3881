"""``/v1/entities``: the people, places and things the principal's conversations mention, with
what was said about each and who said it — derived from messages — and the user's controls:
confirm a fact (only then do other conversations recall it), delete a fact or a whole entity
(the messages stay), or promote one fact to a memory (an explicit act, through the normal
consent and never-store path)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from convmem.service.auth import ActingScope
from convmem.service.memories import written
from convmem.service.schemas import (
    SCOPE_PATTERN,
    DeletedOut,
    EntityFactOut,
    EntityOut,
    NoticeOut,
)

router = APIRouter(prefix="/v1/entities", tags=["entities"])
EntityId = Annotated[str, Path(min_length=1, max_length=256)]
FactId = Annotated[str, Path(min_length=1, max_length=256)]


@router.get("", response_model=list[EntityOut])
def list_entities(
    scope: ActingScope,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=2000,
            description="Only the entities this text names, by any name or alias, in any case.",
        ),
    ] = None,
    entity_scope: Annotated[
        str | None, Query(alias="scope", min_length=1, max_length=256, pattern=SCOPE_PATTERN)
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[dict[str, Any]]:
    """The principal's entities, most recently mentioned first, without their facts."""
    if q is None:
        found = scope.entities.list(scope=entity_scope, limit=limit, offset=offset)
    else:
        named = scope.entities.search(q, k=min(offset + limit, 1000))
        if entity_scope is not None:
            named = [e for e in named if e.scope == entity_scope]
        found = named[offset : offset + limit]
    return [entity.to_dict() for entity in found]


@router.get("/{entity_id}", response_model=EntityOut)
def get_entity(entity_id: EntityId, scope: ActingScope) -> dict[str, Any]:
    """The entity with its facts, newest first."""
    return scope.entities.get(entity_id).to_dict()


@router.get("/{entity_id}/facts", response_model=list[EntityFactOut])
def list_facts(
    entity_id: EntityId,
    scope: ActingScope,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[dict[str, Any]]:
    """One page of what was said about the entity, newest first: an entity mentioned a
    thousand times is read a page at a time."""
    facts = scope.entities.get(entity_id).facts[offset : offset + limit]
    return [fact.to_dict() for fact in facts]


@router.delete("/{entity_id}", response_model=DeletedOut)
def delete_entity(entity_id: EntityId, scope: ActingScope) -> dict[str, Any]:
    """Delete the entity and its facts; the messages they came from stay."""
    scope.entities.delete(entity_id)
    return {"deleted_ids": [entity_id]}


@router.post("/{entity_id}/facts/{fact_id}/confirm", response_model=EntityFactOut)
def confirm_fact(entity_id: EntityId, fact_id: FactId, scope: ActingScope) -> dict[str, Any]:
    """The user's consent to one fact: from now on their other conversations may recall it.
    Refused (422 ``never_store``) while memory is off or when the policy refuses its text."""
    return scope.entities.confirm(entity_id, fact_id).to_dict()


@router.delete("/{entity_id}/facts/{fact_id}", response_model=DeletedOut)
def delete_fact(entity_id: EntityId, fact_id: FactId, scope: ActingScope) -> dict[str, Any]:
    """Delete one fact (the message stays); an entity left without facts goes too."""
    scope.entities.delete_fact(entity_id, fact_id)
    return {"deleted_ids": [fact_id]}


@router.post("/{entity_id}/facts/{fact_id}/promote", status_code=201, response_model=NoticeOut)
def promote_fact(entity_id: EntityId, fact_id: FactId, scope: ActingScope) -> dict[str, Any]:
    """Keep one fact as a confirmed memory (the user's explicit act). A fact the policy refuses
    is a 422 ``never_store`` problem; nothing is written."""
    return written(scope.entities.promote(entity_id, fact_id))
