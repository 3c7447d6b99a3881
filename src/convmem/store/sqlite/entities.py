"""SQLite rows of entity memory (migrations m050, m064, m066): entities, their names and the
messages that said them, their facts (with who said each and whether the user confirmed it)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.entities import Entity, EntityFact, FactStatus
from convmem.store.entities import (
    ENTITY_SELECT,
    FACT_COLUMNS,
    EntityRow,
    EntityTurnRow,
    admitted_names,
    confirmed_only_clause,
    entity_from_row,
    fact_from_row,
    fact_values,
)
from convmem.store.lineage import Cascade
from convmem.store.ranking import Window
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.entity_sources import recompute_names
from convmem.store.sqlite.ranking import _in_window as in_window  # the retrievers' window filter
from convmem.store.sqlite.sql import TEXT_CODEC, utc_text

_JOINED = "FROM entities e JOIN entity_facts f ON f.tenant_id = e.tenant_id AND f.entity_id = e.id "


def _ids(values: Iterable[str]) -> str:
    return json.dumps(list(values))


class EntityTxnMixin:
    _db: Statements

    if TYPE_CHECKING:  # the cascade mixin's (convmem.store.lineage)

        def _cascade(self) -> Cascade: ...

        def _owned(self, tenant: str, user: str, table: str, ids: Sequence[str]) -> list[str]: ...

    # --- reads ----------------------------------------------------------------------------------

    def _entities(self, tenant: str, where: str, params: tuple[object, ...], tail: str = "",
                  tail_params: tuple[object, ...] = ()) -> list[Entity]:  # fmt: skip
        rows = self._db.execute(
            f"SELECT {ENTITY_SELECT} {_JOINED} WHERE e.tenant_id = ? {where} "
            f"GROUP BY e.id ORDER BY MAX(f.said_at) DESC, e.id {tail}",
            (tenant, *params, *tail_params),
        ).fetchall()
        aliases = self._aliases(tenant, [row[0] for row in rows])
        return [entity_from_row(row, aliases.get(row[0], []), TEXT_CODEC) for row in rows]

    def _aliases(self, tenant: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        if not entity_ids:
            return {}
        rows = self._db.execute(
            "SELECT entity_id, alias FROM entity_names WHERE tenant_id = ? "
            "AND entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, rowid",
            (tenant, _ids(entity_ids)),
        ).fetchall()
        out: dict[str, list[str]] = {}
        for entity_id, alias in rows:
            out.setdefault(entity_id, []).append(alias)
        return out

    def list_entities(
        self, tenant: str, user: str, *, scopes: Sequence[str] | None, limit: int, offset: int
    ) -> list[Entity]:
        where = "AND e.user_id = ?"
        params: tuple[object, ...] = (user,)
        if scopes is not None:
            where += " AND e.scope IN (SELECT value FROM json_each(?))"
            params += (_ids(scopes),)
        return self._entities(tenant, where, params, "LIMIT ? OFFSET ?", (limit, offset))

    def get_entity(self, tenant: str, user: str, entity_id: str) -> Entity:
        found = self._entities(tenant, "AND e.user_id = ? AND e.id = ?", (user, entity_id))
        if not found:
            raise NotFound("entity", entity_id)
        rows = self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? ORDER BY said_at DESC, id",
            (tenant, user, entity_id),
        ).fetchall()
        facts = tuple(fact_from_row(row, TEXT_CODEC) for row in rows)
        entity = found[0]
        return Entity(**{**entity.__dict__, "facts": facts})

    def entities_named(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str] | None
    ) -> list[Entity]:
        if not keys or (scopes is not None and not scopes):
            return []
        return self._entities(
            tenant,
            "AND e.user_id = ? AND (? IS NULL OR e.scope IN (SELECT value FROM json_each(?))) "
            "AND e.id IN (SELECT n.entity_id FROM entity_names n WHERE n.tenant_id = ? "
            "AND n.user_id = ? AND n.key IN (SELECT value FROM json_each(?)))",
            (user, scopes and 1, _ids(scopes or ()), tenant, user, _ids(keys)),
        )

    def entities_named_prefix(
        self, tenant: str, user: str, prefix: str, *, scopes: Sequence[str], limit: int
    ) -> list[Entity]:
        if not prefix or not scopes:
            return []
        # a range on the (tenant, user, key) index: keys compare as UTF-8 bytes
        return self._entities(
            tenant,
            "AND e.user_id = ? AND e.scope IN (SELECT value FROM json_each(?)) "
            "AND e.id IN (SELECT n.entity_id FROM entity_names n WHERE n.tenant_id = ? "
            "AND n.user_id = ? AND n.key > ? AND n.key < ? AND substr(n.key, 1, ?) = ?)",
            (user, _ids(scopes), tenant, user, prefix, prefix + "\U0010ffff", len(prefix),
             prefix),
            "LIMIT ?", (limit,),
        )  # fmt: skip

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
        if not entity_ids:
            return []
        rows = self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id IN (SELECT value FROM json_each(?)) "
            "AND (? IS NULL OR conversation_id = ?) AND (? IS NULL OR conversation_id <> ?) "
            f"{confirmed_only_clause(confirmed_only)}ORDER BY +said_at DESC, id LIMIT ?",
            (
                tenant, user, _ids(entity_ids), conversation_id, conversation_id,
                outside_conversation, outside_conversation, limit,
            ),
        ).fetchall()  # fmt: skip
        return [fact_from_row(row, TEXT_CODEC) for row in rows]

    def entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> EntityFact:
        row = self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? AND id = ?",
            (tenant, user, entity_id, fact_id),
        ).fetchone()
        if row is None:
            raise NotFound("fact", fact_id)
        return fact_from_row(row, TEXT_CODEC)

    def confirmed_fact_sources(self, tenant: str, user: str) -> set[tuple[str, str]]:
        rows = self._db.execute(
            "SELECT message_id, text FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND status = 'confirmed'",
            (tenant, user),
        ).fetchall()
        return {(row[0], row[1]) for row in rows}

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
        if not entity_ids:
            return []
        # Read from the named entities' facts (their index) into the turns' index rows, one
        # seek each: CROSS JOIN fixes that order, and the unary + keeps SQLite off the facts'
        # conversation index. Left to itself SQLite read every turn of the conversation and, for
        # each, every fact of the conversation: 0.8 s at 3,000 messages, growing as its square.
        sql, params = in_window(
            "SELECT DISTINCT f.message_id, f.entity_id, i.speaker, i.depth, i.created_at "
            "FROM entity_facts f CROSS JOIN message_index i "
            "ON i.tenant_id = f.tenant_id AND i.message_id = f.message_id "
            "WHERE f.tenant_id = ? AND f.user_id = ? AND +f.conversation_id = ? "
            "AND f.entity_id IN (SELECT value FROM json_each(?)) AND i.user_id = ? "
            "AND i.conversation_id = ?",
            [tenant, user, conversation_id, _ids(entity_ids), user, conversation_id],
            window,
        )
        rows = self._db.execute(
            sql + " ORDER BY i.depth DESC, f.message_id, f.entity_id LIMIT ?", (*params, limit)
        ).fetchall()
        return [
            EntityTurnRow(row[0], row[1], row[2], int(row[3]), datetime.fromisoformat(row[4]))
            for row in rows
        ]

    def indexed_turn_count(
        self, tenant: str, user: str, conversation_id: str, *, window: Window, cap: int
    ) -> int:
        sql, params = in_window(
            "SELECT 1 FROM message_index i WHERE i.tenant_id = ? AND i.user_id = ? "
            "AND i.conversation_id = ?",
            [tenant, user, conversation_id],
            window,
        )
        row = self._db.execute(f"SELECT COUNT(*) FROM ({sql} LIMIT ?)", (*params, cap)).fetchone()
        return int(row[0])

    # --- writes ---------------------------------------------------------------------------------

    def put_entity(self, tenant: str, user: str, admitted: Admitted[EntityRow]) -> None:
        row = admitted.value
        self._db.execute(
            "INSERT INTO entities (tenant_id, id, user_id, scope, name, type, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, id) DO UPDATE SET "
            "name = excluded.name, type = excluded.type",
            (tenant, row.id, user, row.scope, row.name, row.type, utc_text(row.created_at)),
        )
        self._db.executemany(
            "INSERT OR IGNORE INTO entity_names (tenant_id, entity_id, key, user_id, scope, alias) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(tenant, row.id, key, user, row.scope, alias) for alias, key in row.aliases],
        )

    def add_entity_name_sources(
        self, tenant: str, user: str, admitted: Admitted[EntityRow], message_id: str,
        names: Sequence[tuple[str, str]],
    ) -> None:  # fmt: skip
        entity_id, names = admitted.value.id, admitted_names(admitted, names)
        self._db.executemany(
            "INSERT OR IGNORE INTO entity_name_sources (tenant_id, entity_id, key, message_id, "
            "user_id, alias) VALUES (?, ?, ?, ?, ?, ?)",
            [(tenant, entity_id, key, message_id, user, alias) for alias, key in names],
        )

    def add_entity_facts(
        self, tenant: str, user: str, admitted: Admitted[tuple[EntityFact, ...]]
    ) -> None:
        facts = admitted.value
        self._db.executemany(
            f"INSERT INTO entity_facts (tenant_id, user_id, {FACT_COLUMNS}) "
            "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM entities "
            "WHERE tenant_id = ? AND id = ? AND user_id = ?)",
            [(tenant, user, *fact_values(f, utc_text), tenant, f.entity_id, user) for f in facts],
        )

    def set_entity_fact_status(
        self, tenant: str, user: str, entity_id: str, fact_id: str, status: FactStatus
    ) -> None:
        updated = self._db.execute(
            "UPDATE entity_facts SET status = ? WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? AND id = ?",
            (status, tenant, user, entity_id, fact_id),
        ).rowcount
        if not updated:
            raise NotFound("fact", fact_id)

    def delete_entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> None:
        rows = self._db.execute(
            "DELETE FROM entity_facts WHERE tenant_id = ? AND user_id = ? AND entity_id = ? "
            "AND id = ? RETURNING entity_id",
            (tenant, user, entity_id, fact_id),
        ).fetchall()
        if not rows:
            raise NotFound("fact", fact_id)
        self._drop_entities_without_facts(tenant, [entity_id])

    def delete_entity(self, tenant: str, user: str, entity_id: str) -> None:
        if not self._owned(tenant, user, "entities", [entity_id]):
            raise NotFound("entity", entity_id)
        self._cascade().erase(tenant, "entity", [entity_id])

    def _drop_entities_without_facts(self, tenant: str, entity_ids: Iterable[str]) -> None:
        """After facts of these entities were deleted: their names follow the sources left
        (``convmem.store.entity_sources``), and an entity without facts goes."""
        ids = _ids(set(entity_ids))
        recompute_names(self._db, tenant, ids)
        orphan = (
            "entity_id IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM "
            "entity_facts f WHERE f.tenant_id = ? AND f.entity_id = {0})"
        )
        self._db.execute(
            "DELETE FROM entity_names WHERE tenant_id = ? AND "
            + orphan.format("entity_names.entity_id"),
            (tenant, ids, tenant),
        )
        self._db.execute(
            "DELETE FROM entities WHERE tenant_id = ? AND "
            + orphan.replace("entity_id IN", "id IN", 1).format("entities.id"),
            (tenant, ids, tenant),
        )

    def delete_user_entities(self, tenant: str, user: str) -> int:
        return self._cascade().erase_all(tenant, "entity", user)

    def delete_entity_facts_before(self, tenant: str, cutoff: datetime) -> int:
        rows = self._db.execute(
            "DELETE FROM entity_facts WHERE tenant_id = ? AND said_at < ? RETURNING entity_id",
            (tenant, utc_text(cutoff)),
        ).fetchall()
        if rows:
            self._drop_entities_without_facts(tenant, (row[0] for row in rows))
        return len(rows)
