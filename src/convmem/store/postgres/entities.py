"""PostgreSQL rows of entity memory (migrations m013, m019, m021): entities, their names and the
messages that said them, their facts.

A user's entity writes are serialised by the owner lock (``TxnBase._lock_owner``), taken before
a write transaction reads the names it will merge into: two turns naming the same new person in
two conversations at once make one entity, not two."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

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
from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.entity_sources import recompute_names
from convmem.store.postgres.search import _window as window_clause  # the retrievers' window filter
from convmem.store.ranking import Window
from convmem.store.rows import DECODED

_JOINED = "FROM entities e JOIN entity_facts f ON f.tenant_id = e.tenant_id AND f.entity_id = e.id "


class EntityTxnMixin(CascadeTxnMixin):
    # --- reads ----------------------------------------------------------------------------------

    def _entities(self, tenant: str, where: str, params: tuple[object, ...], tail: str = "",
                  tail_params: tuple[object, ...] = ()) -> list[Entity]:  # fmt: skip
        # the names in the same statement (one round trip), in the order they were written
        rows = self._db.execute(
            f"SELECT {ENTITY_SELECT}, (SELECT array_agg(n.alias ORDER BY n.seq) "
            "FROM entity_names n WHERE n.tenant_id = %s AND n.entity_id = e.id) "
            f"{_JOINED} WHERE e.tenant_id = %s {where} "
            f"GROUP BY e.id, e.scope, e.name, e.type ORDER BY MAX(f.said_at) DESC, e.id {tail}",
            (tenant, tenant, *params, *tail_params),
        ).fetchall()
        return [entity_from_row(row[:-1], list(row[-1] or ()), DECODED) for row in rows]

    def list_entities(
        self, tenant: str, user: str, *, scopes: Sequence[str] | None, limit: int, offset: int
    ) -> list[Entity]:
        where = "AND e.user_id = %s"
        params: tuple[object, ...] = (user,)
        if scopes is not None:
            where += " AND e.scope = ANY(%s)"
            params += (list(scopes),)
        return self._entities(tenant, where, params, "LIMIT %s OFFSET %s", (limit, offset))

    def get_entity(self, tenant: str, user: str, entity_id: str) -> Entity:
        found = self._entities(tenant, "AND e.user_id = %s AND e.id = %s", (user, entity_id))
        if not found:
            raise NotFound("entity", entity_id)
        rows = self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = %s AND user_id = %s "
            "AND entity_id = %s ORDER BY said_at DESC, id",
            (tenant, user, entity_id),
        ).fetchall()
        facts = tuple(fact_from_row(row, DECODED) for row in rows)
        entity = found[0]
        return Entity(**{**entity.__dict__, "facts": facts})

    def entities_named(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str] | None
    ) -> list[Entity]:
        if not keys or (scopes is not None and not scopes):
            return []
        self._lock_owner(tenant, user)  # in a write: what is read here is merged into
        return self._entities(
            tenant,
            "AND e.user_id = %s AND (%s::text[] IS NULL OR e.scope = ANY(%s)) AND e.id IN "
            "(SELECT n.entity_id FROM entity_names n WHERE n.tenant_id = %s AND n.user_id = %s "
            "AND n.key = ANY(%s))",
            (user, scopes and list(scopes), scopes and list(scopes), tenant, user, list(keys)),
        )

    def entities_named_prefix(
        self, tenant: str, user: str, prefix: str, *, scopes: Sequence[str], limit: int
    ) -> list[Entity]:
        if not prefix or not scopes:
            return []
        self._lock_owner(tenant, user)  # as in entities_named
        return self._entities(
            tenant,
            "AND e.user_id = %s AND e.scope = ANY(%s) AND e.id IN (SELECT n.entity_id FROM "
            "entity_names n WHERE n.tenant_id = %s AND n.user_id = %s "
            "AND starts_with(n.key, %s) AND n.key <> %s)",
            (user, list(scopes), tenant, user, prefix, prefix),
            "LIMIT %s", (limit,),
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
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = %s AND user_id = %s "
            "AND entity_id = ANY(%s) AND (%s::text IS NULL OR conversation_id = %s) "
            "AND (%s::text IS NULL OR conversation_id <> %s) "
            f"{confirmed_only_clause(confirmed_only)}ORDER BY said_at DESC, id LIMIT %s",
            (
                tenant, user, list(entity_ids), conversation_id, conversation_id,
                outside_conversation, outside_conversation, limit,
            ),
        ).fetchall()  # fmt: skip
        return [fact_from_row(row, DECODED) for row in rows]

    def entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> EntityFact:
        row = self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = %s AND user_id = %s "
            "AND entity_id = %s AND id = %s",
            (tenant, user, entity_id, fact_id),
        ).fetchone()
        if row is None:
            raise NotFound("fact", fact_id)
        return fact_from_row(row, DECODED)

    def confirmed_fact_sources(self, tenant: str, user: str) -> set[tuple[str, str]]:
        rows = self._db.execute(
            "SELECT message_id, text FROM entity_facts WHERE tenant_id = %s AND user_id = %s "
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
        where, params = window_clause(window)
        rows = self._db.execute(
            "SELECT DISTINCT f.message_id, f.entity_id, i.speaker, i.depth, i.created_at "
            "FROM entity_facts f "
            "JOIN message_index i ON i.tenant_id = f.tenant_id AND i.message_id = f.message_id "
            "WHERE f.tenant_id = %s AND f.user_id = %s AND f.conversation_id = %s "
            "AND f.entity_id = ANY(%s) AND i.tenant_id = %s AND i.user_id = %s "
            f"AND i.conversation_id = %s {where} "
            "ORDER BY i.depth DESC, f.message_id, f.entity_id LIMIT %s",
            (tenant, user, conversation_id, list(entity_ids), tenant, user, conversation_id,
             *params, limit),
        ).fetchall()  # fmt: skip
        return [EntityTurnRow(row[0], row[1], row[2], int(row[3]), row[4]) for row in rows]

    def indexed_turn_count(
        self, tenant: str, user: str, conversation_id: str, *, window: Window, cap: int
    ) -> int:
        where, params = window_clause(window)
        row = self._db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM message_index i WHERE i.tenant_id = %s "
            f"AND i.user_id = %s AND i.conversation_id = %s {where} LIMIT %s) counted",
            (tenant, user, conversation_id, *params, cap),
        ).fetchone()
        return int(row[0]) if row else 0

    # --- writes ---------------------------------------------------------------------------------

    def put_entity(self, tenant: str, user: str, admitted: Admitted[EntityRow]) -> None:
        row = admitted.value
        self._lock_owner(tenant, user)
        self._db.execute(
            "INSERT INTO entities (tenant_id, id, user_id, scope, name, type, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, id) DO UPDATE SET "
            "name = EXCLUDED.name, type = EXCLUDED.type",
            (tenant, row.id, user, row.scope, row.name, row.type, row.created_at),
        )
        for alias, key in row.aliases:
            self._db.execute(
                "INSERT INTO entity_names (tenant_id, entity_id, key, user_id, scope, alias) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant, row.id, key, user, row.scope, alias),
            )

    def add_entity_name_sources(
        self, tenant: str, user: str, admitted: Admitted[EntityRow], message_id: str,
        names: Sequence[tuple[str, str]],
    ) -> None:  # fmt: skip
        entity_id, names = admitted.value.id, admitted_names(admitted, names)
        for alias, key in names:
            self._db.execute(
                "INSERT INTO entity_name_sources (tenant_id, entity_id, key, message_id, user_id, "
                "alias) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant, entity_id, key, message_id, user, alias),
            )

    def add_entity_facts(
        self, tenant: str, user: str, admitted: Admitted[tuple[EntityFact, ...]]
    ) -> None:
        facts = admitted.value
        for f in facts:
            self._db.execute(
                f"INSERT INTO entity_facts (tenant_id, user_id, {FACT_COLUMNS}) "
                "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s WHERE EXISTS "
                "(SELECT 1 FROM entities WHERE tenant_id = %s AND id = %s AND user_id = %s)",
                (tenant, user, *fact_values(f, lambda at: at), tenant, f.entity_id, user),
            )

    def set_entity_fact_status(
        self, tenant: str, user: str, entity_id: str, fact_id: str, status: FactStatus
    ) -> None:
        row = self._db.execute(
            "UPDATE entity_facts SET status = %s WHERE tenant_id = %s AND user_id = %s "
            "AND entity_id = %s AND id = %s RETURNING id",
            (status, tenant, user, entity_id, fact_id),
        ).fetchone()
        if row is None:
            raise NotFound("fact", fact_id)

    def delete_entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> None:
        self._lock_owner(tenant, user)
        if not self._delete_facts(
            tenant, "user_id = %s AND entity_id = %s AND id = %s", (user, entity_id, fact_id)
        ):
            raise NotFound("fact", fact_id)

    def delete_entity(self, tenant: str, user: str, entity_id: str) -> None:
        self._lock_owner(tenant, user)
        if not self._owned(tenant, user, "entities", [entity_id]):
            raise NotFound("entity", entity_id)
        self._cascade().erase(tenant, "entity", [entity_id])

    def _drop_entities_without_facts(self, tenant: str, entity_ids: Iterable[str]) -> None:
        """After facts of these entities were deleted: their names follow the sources left
        (``convmem.store.entity_sources``), and an entity without facts goes."""
        ids = sorted(set(entity_ids))
        recompute_names(self._db, tenant, ids)
        orphan = (
            "= ANY(%s) AND NOT EXISTS (SELECT 1 FROM entity_facts f "
            "WHERE f.tenant_id = %s AND f.entity_id = {0})"
        )
        self._db.execute(
            "DELETE FROM entity_names WHERE tenant_id = %s AND entity_id "
            + orphan.format("entity_names.entity_id"),
            (tenant, ids, tenant),
        )
        self._db.execute(
            "DELETE FROM entities WHERE tenant_id = %s AND id " + orphan.format("entities.id"),
            (tenant, ids, tenant),
        )

    def _delete_facts(self, tenant: str, where: str, params: tuple[object, ...]) -> int:
        rows = self._db.execute(
            f"DELETE FROM entity_facts WHERE tenant_id = %s AND {where} RETURNING entity_id",
            (tenant, *params),
        ).fetchall()
        if rows:
            self._drop_entities_without_facts(tenant, (row[0] for row in rows))
        return len(rows)

    def delete_user_entities(self, tenant: str, user: str) -> int:
        self._lock_owner(tenant, user)
        return self._cascade().erase_all(tenant, "entity", user)

    def delete_entity_facts_before(self, tenant: str, cutoff: datetime) -> int:
        return self._delete_facts(tenant, "said_at < %s", (cutoff,))
