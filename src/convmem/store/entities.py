"""Entity memory rows: each user's entities (per scope: "user" or "project:<id>"), the names they
go by, and their facts — derived data, rebuilt from messages (``convmem.entities.derive``).

Semantics every backend keeps:

- An entity's first and last mention and its mention count are computed from its facts; an
  entity is never left without facts: every write that removes facts removes the entities it
  left without any (a message's deletion through the lineage cascade,
  ``convmem.store.lineage``; ``delete_entity_facts_before``), in the same statement sequence.
- ``ConversationWrites.delete_messages`` and ``delete_conversation`` delete the facts their
  messages sourced (the cascade); ``UserDataWrites.delete_user`` deletes every entity row of
  the user; exports hold them.
- Every name and alias cites the messages that said it (``convmem.store.entity_sources``): the
  writes that remove facts remove the names no remaining message said, and rename an entity
  whose canonical name was one of them.
- Names are looked up by key (``convmem.entities.names.name_key``) among one scope's entities.
- A fact keeps who said it (the role of its message, and the participant's name if the message
  carried one) and its status: stored "proposed", "confirmed" only by the user's act
  (``set_entity_fact_status``). ``entity_facts(confirmed_only=True)`` filters in the query, so a
  proposal never reaches another conversation's ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from convmem.model.admitted import Admitted
from convmem.model.entities import Entity, EntityFact, EntityType, FactStatus
from convmem.store.ranking import Window
from convmem.store.rows import Codec


@dataclass(frozen=True)
class EntityTurnRow:
    """A searchable turn of a conversation that one of the entities has a fact from, with what
    fusion's priors need (the ``MessageHitRow`` fields): its speaker, depth and time."""

    message_id: str
    entity_id: str
    speaker: str
    depth: int
    created_at: datetime


@dataclass(frozen=True)
class EntityRow:
    """An entity as written: its names (display form → key) and type; the aggregates are the
    store's to compute."""

    id: str
    scope: str
    name: str
    type: EntityType
    aliases: tuple[tuple[str, str], ...]  # (alias as said, its key), the name's own included
    created_at: datetime


class EntityReads(Protocol):
    def list_entities(
        self, tenant: str, user: str, *, scopes: Sequence[str] | None, limit: int, offset: int
    ) -> list[Entity]:
        """The user's entities (of ``scopes``; None: every scope), most recently mentioned
        first, without their facts."""
        ...

    def get_entity(self, tenant: str, user: str, entity_id: str) -> Entity:
        """The user's entity with its facts (newest first); ``NotFound`` for any other id."""
        ...

    def entities_named(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str] | None
    ) -> list[Entity]:
        """The user's entities of ``scopes`` (None: any) going by any of the name ``keys``,
        most recently mentioned first, without their facts."""
        ...

    def entities_named_prefix(
        self, tenant: str, user: str, prefix: str, *, scopes: Sequence[str], limit: int
    ) -> list[Entity]:
        """The user's entities of ``scopes`` going by a name key that starts with ``prefix`` and
        is longer (a short form's candidates: "mel" finds Melanie), at most ``limit``, most
        recently mentioned first, without their facts."""
        ...

    def entity_facts(
        self,
        tenant: str,
        user: str,
        entity_ids: Sequence[str],
        *,
        conversation_id: str | None = None,
        outside_conversation: str | None = None,
        confirmed_only: bool = False,
        limit: int,
    ) -> list[EntityFact]:
        """The facts of these entities of the user, newest first: of one conversation, if
        given; of every other conversation than ``outside_conversation``, if given; only those
        the user confirmed, with ``confirmed_only``."""
        ...

    def named_entity_facts(
        self,
        tenant: str,
        user: str,
        keys: Sequence[str],
        *,
        scopes: Sequence[str],
        outside_conversation: str | None,
        confirmed_only: bool,
        limit: int,
    ) -> tuple[list[Entity], list[EntityFact]]:
        """``entities_named`` (of ``scopes``) and those entities' ``entity_facts``, as one unit
        of work (PostgreSQL: one round trip); (``[]``, ``[]``) when no entity goes by the
        keys."""
        ...

    def read_named_entity_facts_ahead(
        self,
        tenant: str,
        user: str,
        keys: Sequence[str],
        *,
        scopes: Sequence[str],
        outside_conversation: str | None,
        confirmed_only: bool,
        limit: int,
    ) -> None:
        """A hint that ``named_entity_facts`` of these arguments comes later in this read: a
        store that queues statements sends its reads now, so they ride with the next round
        trip; one that runs each statement when it is sent does nothing."""
        ...

    def entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> EntityFact:
        """One fact of the user's entity; ``NotFound`` for any other pair of ids."""
        ...

    def confirmed_fact_sources(self, tenant: str, user: str) -> set[tuple[str, str]]:
        """(message id, text) of every fact of the user that is confirmed: what a rebuild
        keeps confirmed (the same statement of the same message)."""
        ...

    def entity_turns(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        entity_ids: Sequence[str],
        *,
        window: Window,
        limit: int,
    ) -> list[EntityTurnRow]:
        """The indexed turns of one conversation of the user inside ``window`` that these
        entities have facts from, one row per (turn, entity), newest turns first: entity-aware
        retrieval's candidates, filtered in the query like the other retrievers'."""
        ...

    def indexed_turn_count(
        self, tenant: str, user: str, conversation_id: str, *, window: Window, cap: int
    ) -> int:
        """How many indexed turns of one conversation of the user lie inside ``window``,
        counted up to ``cap`` (a bound on the read, not an error): the reference an entity's
        own turn count is weighed against (``convmem.entities.recall``)."""
        ...

    def counted_entity_turns(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        entity_ids: Sequence[str],
        *,
        window: Window,
        limit: int,
        cap: int,
    ) -> tuple[list[EntityTurnRow], int]:
        """``entity_turns``, and ``indexed_turn_count`` over the span they were read from
        (``turns_span``), as one unit of work (PostgreSQL: one round trip, unless ``limit``
        turns came back); (``[]``, 0) when there are none."""
        ...

    def read_counted_entity_turns_ahead(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        entity_ids: Sequence[str],
        *,
        window: Window,
        limit: int,
        cap: int,
    ) -> None:
        """A hint that ``counted_entity_turns`` of these arguments comes later in this read: a
        store that queues statements sends its reads now, so they ride with the next round
        trip; one that runs each statement when it is sent does nothing."""
        ...


class EntityWrites(Protocol):
    def put_entity(self, tenant: str, user: str, admitted: Admitted[EntityRow]) -> None:
        """Insert the admitted entity, or update its name and type and add the aliases it
        lacks."""
        ...

    def add_entity_name_sources(
        self, tenant: str, user: str, admitted: Admitted[EntityRow], message_id: str,
        names: Sequence[tuple[str, str]],
    ) -> None:  # fmt: skip
        """Record that ``message_id`` said these (name, key) pairs of the user's admitted entity
        (only pairs among the row's aliases are written: ``admitted_names``), in the
        transaction that stores the message's facts about it (``convmem.store.entity_sources``:
        a name goes with the last message that said it)."""
        ...

    def add_entity_facts(
        self, tenant: str, user: str, admitted: Admitted[tuple[EntityFact, ...]]
    ) -> None:
        """Store admitted facts of the user's entities (a fact of a missing entity is a
        ``StoreError`` or dropped — callers put the entity first)."""
        ...

    def delete_entity(self, tenant: str, user: str, entity_id: str) -> None:
        """Delete the user's entity with its names and facts (never the messages);
        ``NotFound`` for any other id."""
        ...

    def set_entity_fact_status(
        self, tenant: str, user: str, entity_id: str, fact_id: str, status: FactStatus
    ) -> None:
        """Set the status of one fact of the user's entity; ``NotFound`` for any other ids."""
        ...

    def delete_entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> None:
        """Delete one fact of the user's entity (never its message), and the entity if it is
        left without facts (its names follow the facts left); ``NotFound`` for any other ids."""
        ...

    def delete_user_entities(self, tenant: str, user: str) -> int:
        """Delete every entity of the user (before a rebuild); how many."""
        ...

    def delete_entity_facts_before(self, tenant: str, cutoff: datetime) -> int:
        """Retention: delete the tenant's facts said before ``cutoff`` and the entities left
        without facts (so an entity last mentioned before it goes whole); how many facts."""
        ...


# --- rows (shared by the backends: one column order, decoded by the backend's codec) --------------

# an entity's aggregates over its facts; the query joins ``entities e`` to ``entity_facts f``
ENTITY_SELECT = "e.id, e.scope, e.name, e.type, MIN(f.said_at), MAX(f.said_at), COUNT(f.id)"
FACT_COLUMNS = (
    "id, entity_id, text, message_id, conversation_id, said_at, confidence, extractor, speaker, "
    "speaker_name, status"
)


def confirmed_only_clause(confirmed_only: bool) -> str:
    """The condition ``entity_facts(confirmed_only=True)`` adds, written out rather than bound
    as a parameter, so the planner can use the partial index of confirmed facts
    (``entity_facts_confirmed``): the read is bounded by the confirmed facts, not by every
    proposal an often-named entity has."""
    return "AND status = 'confirmed' " if confirmed_only else ""


def fact_values(fact: EntityFact, codec_time: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``FACT_COLUMNS`` for ``fact``; ``codec_time`` writes a time the backend's
    way."""
    return (
        fact.id, fact.entity_id, fact.text, fact.message_id, fact.conversation_id,
        codec_time(fact.said_at), fact.confidence, fact.extractor, fact.speaker,
        fact.speaker_name, fact.status,
    )  # fmt: skip


def entity_from_row(
    row: Sequence[Any], aliases: Sequence[str], codec: Codec, facts: Sequence[EntityFact] = ()
) -> Entity:
    name = row[2]
    return Entity(
        id=row[0], scope=row[1], name=name, type=row[3],
        aliases=tuple(a for a in aliases if a != name),
        first_mention=codec.time(row[4]), last_mention=codec.time(row[5]),
        mention_count=int(row[6]), facts=tuple(facts),
    )  # fmt: skip


def fact_from_row(row: Sequence[Any], codec: Codec) -> EntityFact:
    return EntityFact(
        id=row[0], entity_id=row[1], text=row[2], message_id=row[3], conversation_id=row[4],
        said_at=codec.time(row[5]), confidence=float(row[6]), extractor=row[7],
        speaker=row[8], speaker_name=row[9], status=row[10],
    )  # fmt: skip


# --- the consent migrations (SQLite m066, PostgreSQL m021) ------------------------------------

# After the speakers were filled from the messages: a fact whose message is gone (no delete
# leaves one) cannot say who said it, and goes.
UNSPOKEN_FACTS = (
    "DELETE FROM entity_facts WHERE speaker IS NULL OR speaker NOT IN ('user', 'assistant') "
    "RETURNING tenant_id, entity_id"
)
# (table, entity id column): the rows an entity left without facts loses, then the entity
WITHOUT_FACTS = (("entity_name_sources", "entity_id"), ("entity_names", "entity_id"),
                 ("entities", "id"))  # fmt: skip


def entities_by_tenant(rows: Sequence[Sequence[Any]]) -> dict[str, list[str]]:
    """(tenant, entity id) rows as each tenant's entity ids, sorted."""
    found: dict[str, set[str]] = {}
    for tenant, entity_id in rows:
        found.setdefault(tenant, set()).add(entity_id)
    return {tenant: sorted(ids) for tenant, ids in found.items()}


def admitted_names(
    admitted: Admitted[EntityRow], names: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The (name, key) pairs among the admitted row's aliases: a name source writes no name the
    gate did not see."""
    allowed = set(admitted.value.aliases)
    return [pair for pair in names if pair in allowed]


def turns_span(window: Window, turns: Sequence[EntityTurnRow], limit: int) -> Window:
    """The part of ``window`` that ``turns`` (an ``entity_turns`` answer of at most ``limit``)
    were read from: all of it, or, when the limit was reached (the newest turns only), from the
    oldest turn read on."""
    if len(turns) < limit:
        return window
    oldest = min(turn.created_at for turn in turns)
    return replace(window, since=max(oldest, window.since or oldest))


def plain_counted_entity_turns(
    tx: EntityReads,
    tenant: str,
    user: str,
    conversation_id: str,
    entity_ids: Sequence[str],
    *,
    window: Window,
    limit: int,
    cap: int,
) -> tuple[list[EntityTurnRow], int]:
    """``counted_entity_turns`` read by its parts, one after another."""
    turns = tx.entity_turns(tenant, user, conversation_id, entity_ids, window=window, limit=limit)
    if not turns:
        return [], 0
    span = turns_span(window, turns, limit)
    return turns, tx.indexed_turn_count(tenant, user, conversation_id, window=span, cap=cap)


def plain_named_entity_facts(
    tx: EntityReads,
    tenant: str,
    user: str,
    keys: Sequence[str],
    *,
    scopes: Sequence[str],
    outside_conversation: str | None,
    confirmed_only: bool,
    limit: int,
) -> tuple[list[Entity], list[EntityFact]]:
    """``named_entity_facts`` read by its parts, one after another."""
    named = tx.entities_named(tenant, user, keys, scopes=scopes)
    if not named:
        return [], []
    facts = tx.entity_facts(
        tenant, user, [e.id for e in named], outside_conversation=outside_conversation,
        confirmed_only=confirmed_only, limit=limit,
    )  # fmt: skip
    return named, facts
