"""Which messages said each of an entity's names (``entity_name_sources``, SQLite m064,
PostgreSQL m019): what lets a deletion take a name with the last message that said it.

A source row (entity, name key, message) is written by ``convmem.entities.derive`` for every
name a turn attaches, in the transaction that stores the turn's facts about that entity, so an
entity has a source from a message exactly when it has a fact from it. After facts are deleted
(message, conversation, user, retention) each backend, for the entities concerned:

1. drops the sources whose message no longer has a fact of the entity;
2. drops the names no source is left for, and respells a name whose spelling only a deleted
   message used;
3. renames an entity whose canonical name no remaining source spelled: its longest remaining
   name, the earliest message's on a tie (message ids sort by time);
4. deletes an entity left without any name, with its facts (only a database migrated from
   before sources existed can hold one: see ``backfill_sources``).

Databases from before the table: ``backfill_sources`` attributes a stored name to a message
only when one of the entity's facts from that message contains the name as a word — a message
that still exists and says it. A name only deleted messages said (the gap this closes) finds
no such fact and goes; so can a name whose fact sentences never contain it, which is derived
data ``scope.entities.rebuild()`` derives again from the messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class NameRow:
    tenant_id: str
    entity_id: str
    key: str
    user_id: str
    alias: str


@dataclass(frozen=True)
class FactRow:
    tenant_id: str
    entity_id: str
    message_id: str
    text: str


def says(text: str, name: str) -> bool:
    """``name`` occurs in ``text`` as a whole word (case folded): "Mel" is not in "Melanie"."""
    folded = name.casefold().strip()
    if not folded:
        return False
    pattern = rf"(?<!\w){re.escape(folded)}(?!\w)"
    return re.search(pattern, text.casefold()) is not None


def backfill_sources(
    names: Iterable[NameRow], facts: Iterable[FactRow]
) -> list[tuple[str, str, str, str, str, str]]:
    """Source rows (tenant_id, entity_id, key, message_id, user_id, alias) for stored names,
    each attributed to the messages whose facts of the entity say it."""
    by_entity: dict[tuple[str, str], dict[str, list[str]]] = {}
    for fact in facts:
        by_message = by_entity.setdefault((fact.tenant_id, fact.entity_id), {})
        by_message.setdefault(fact.message_id, []).append(fact.text)
    out: list[tuple[str, str, str, str, str, str]] = []
    for name in names:
        for message_id, texts in by_entity.get((name.tenant_id, name.entity_id), {}).items():
            if any(says(text, name.alias) for text in texts):
                out.append(
                    (name.tenant_id, name.entity_id, name.key, message_id, name.user_id,
                     name.alias)
                )  # fmt: skip
    return out


class _Executes(Protocol):
    def execute(self, sql: str, /) -> Any: ...


def sources_to_backfill(db: _Executes) -> list[tuple[str, str, str, str, str, str]]:
    """``backfill_sources`` over every stored name and fact, read through ``db`` (a migration's
    connection, either backend: the two reads are plain SQL in both dialects)."""
    names = [
        NameRow(*row)
        for row in db.execute(
            "SELECT tenant_id, entity_id, key, user_id, alias FROM entity_names"
        ).fetchall()
    ]
    facts = [
        FactRow(*row)
        for row in db.execute(
            "SELECT tenant_id, entity_id, message_id, text FROM entity_facts"
        ).fetchall()
    ]
    return backfill_sources(names, facts)
