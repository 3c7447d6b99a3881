"""The entity handle: the people, places and things a principal's conversations mention.

Derived data (``convmem.entities.derive``): listed, read, searched and deleted here. A fact
follows the consent of memories: it is shown (``get``) with who said it, stored as a proposal,
recalled in the user's *other* conversations only once the user confirms it (``confirm``; or
the tenant's policy recalls proposals: ``TenantPolicy.recall_unconfirmed_entity_facts``), and
deletable one by one (``delete_fact``). Within the conversation it came from a fact keeps
pointing entity-aware retrieval at that conversation's own turns, confirmed or not: those turns
are the conversation itself, which the user sees and which retrieval reads anyway. A fact
becomes a memory only by ``promote``, the user's explicit act, through the normal memory path.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from convmem.domain.memories import audit, memory_gate
from convmem.engine.handles import Owner
from convmem.entities.derive import TurnExtractor, extract_with, rebuild_entities
from convmem.entities.extract import Extraction
from convmem.entities.lookup import name_keys
from convmem.errors import InvalidInput, NeverStoreViolation, NotFound
from convmem.memory.policy import check_text
from convmem.model.conversation import ConversationRecord
from convmem.model.entities import Entity, EntityFact
from convmem.model.memory import MemoryNotice
from convmem.model.tree import check_count, check_identifier
from convmem.store.retry import conflicts_retried

# how many of the user's conversations a rebuild reads per page
_PAGE = 200


class Entities:
    """The principal's entities: list, get, search, delete, promote a fact, rebuild."""

    def __init__(self, owner: Owner, remember: Callable[..., MemoryNotice]) -> None:
        self._owner = owner
        self._remember = remember

    @property
    def _store(self) -> Any:
        return self._owner.memory.store

    def list(
        self, *, scope: str | None = None, limit: int = 50, offset: int = 0
    ) -> builtins.list[Entity]:
        """The entities, most recently mentioned first (without their facts: ``get`` has them).
        ``scope``: "user" or "project:<id>" only."""
        check_count(limit, "limit")
        check_count(offset, "offset", minimum=0)
        scopes = None if scope is None else (_checked_scope(scope),)
        with self._store.read() as tx:
            return list(
                tx.list_entities(
                    self._owner.tenant, self._owner.user, scopes=scopes, limit=limit,
                    offset=offset,
                )
            )  # fmt: skip

    def get(self, entity_id: str) -> Entity:
        """The entity with its facts, newest first; ``NotFound`` unless it is this principal's."""
        check_identifier(entity_id, "entity id")
        with self._store.read() as tx:
            entity: Entity = tx.get_entity(self._owner.tenant, self._owner.user, entity_id)
            return entity

    def search(self, query: str, k: int = 10) -> builtins.list[Entity]:
        """The entities ``query`` names (by any of their names or aliases, in any case)."""
        if not isinstance(query, str):
            raise InvalidInput("query must be a string")
        check_count(k, "k")
        keys = name_keys(query)
        if not keys:
            return []
        with self._store.read() as tx:
            found = tx.entities_named(self._owner.tenant, self._owner.user, keys, scopes=None)
        return list(found[:k])

    @conflicts_retried
    def delete(self, entity_id: str) -> None:
        """Delete the entity and its facts (never the messages they came from)."""
        check_identifier(entity_id, "entity id")
        who = self._owner.principal
        with self._store.write() as tx:
            tx.delete_entity(who.tenant, who.user, entity_id)
            audit(tx, who, "entity.deleted", "entity", entity_id)

    @conflicts_retried
    def confirm(self, entity_id: str, fact_id: str) -> EntityFact:
        """The user's consent to one fact: from now on it may be recalled in their other
        conversations (a "Mentioned before" block, attributed to whoever said it). Refused like
        a memory's confirmation while memory is off, or when the policy now refuses its text;
        confirming a confirmed fact changes nothing. ``NotFound`` unless both ids are this
        principal's."""
        check_identifier(entity_id, "entity id")
        check_identifier(fact_id, "fact id")
        who = self._owner.principal
        with self._store.write() as tx:
            fact: EntityFact = tx.entity_fact(who.tenant, who.user, entity_id, fact_id)
            if fact.status == "confirmed":
                return fact
            closed = memory_gate(tx, who)
            if closed is not None:
                raise NeverStoreViolation(closed)
            # checked again: the fact may predate a rule that now refuses it, and confirming is
            # the moment it starts to travel
            decision = check_text(fact.text)
            if not decision.allowed:
                raise NeverStoreViolation(str(decision.reason), decision.detail)
            tx.set_entity_fact_status(who.tenant, who.user, entity_id, fact_id, "confirmed")
            audit(tx, who, "entity_fact.confirmed", "entity_fact", fact_id)
            confirmed: EntityFact = tx.entity_fact(who.tenant, who.user, entity_id, fact_id)
            return confirmed

    @conflicts_retried
    def delete_fact(self, entity_id: str, fact_id: str) -> None:
        """Delete one fact (never the message it came from); an entity left without facts goes
        too, and its names follow the facts left. ``NotFound`` unless both ids are this
        principal's."""
        check_identifier(entity_id, "entity id")
        check_identifier(fact_id, "fact id")
        who = self._owner.principal
        with self._store.write() as tx:
            tx.delete_entity_fact(who.tenant, who.user, entity_id, fact_id)
            audit(tx, who, "entity_fact.deleted", "entity_fact", fact_id)

    def promote(self, entity_id: str, fact_id: str) -> MemoryNotice:
        """Keep one of the entity's facts as a confirmed memory (the user's explicit act),
        through the normal memory path: never-store, supersession and the audit apply; the
        memory's source is the message the fact came from."""
        check_identifier(fact_id, "fact id")
        entity = self.get(entity_id)
        fact = next((f for f in entity.facts if f.id == fact_id), None)
        if fact is None:
            raise NotFound("fact", fact_id)
        scope = entity.scope if entity.scope.startswith("project:") else "user"
        return self._remember(fact.text, scope=scope, source_message_id=fact.message_id)

    def rebuild(self, extractor: TurnExtractor | None = None) -> int:
        """Derive the principal's entities again from every message; how many facts. With an
        ``extractor`` (``convmem.entities.llm.LLMEntityExtractor``) the turns are read by it
        first, outside the write transaction (it waits on the network); a turn written
        meanwhile, or one it fell back on, is read by the deterministic extractor."""
        extracted: dict[str, tuple[Extraction, str]] = {}
        if extractor is not None:
            tenant, user = self._owner.tenant, self._owner.user
            with self._store.read() as tx:
                messages = [
                    m for record in _conversations(tx, tenant, user)
                    if not record.temporary
                    for m in tx.conversation_messages(tenant, record.id)
                ]  # fmt: skip
            for message in messages:
                found = extract_with(extractor, message)
                if found is not None:
                    extracted[message.id] = found
        return self._rebuild(extracted)

    @conflicts_retried
    def _rebuild(self, extracted: dict[str, tuple[Extraction, str]]) -> int:
        tenant, user = self._owner.tenant, self._owner.user
        with self._store.write() as tx:
            records = _conversations(tx, tenant, user)
            stored: int = rebuild_entities(tx, tenant, user, records, extracted)
            return stored


def _conversations(tx: Any, tenant: str, user: str) -> builtins.list[ConversationRecord]:
    records: builtins.list[ConversationRecord] = []
    while True:
        page = tx.list_conversations(tenant, user, limit=_PAGE, offset=len(records))
        records.extend(page)
        if len(page) < _PAGE:
            return records


def _checked_scope(scope: str) -> str:
    if scope == "user" or (scope.startswith("project:") and len(scope) > len("project:")):
        return scope
    raise InvalidInput("scope must be 'user' or 'project:<id>'")
