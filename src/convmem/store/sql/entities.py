"""Entity memory's rows for both SQL backends (mixed into the backend's transaction): entities,
their names and the messages that said them, their facts. The reads that rank or join the search
index are the backend's.

A user's entity writes are serialised by the owner lock (``SqlTxn._lock_owner``, where the
backend has one), taken before a write reads the names it will merge into: two turns naming the
same new person in two conversations at once make one entity, not two."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.entities import Entity, EntityFact, FactStatus
from convmem.store.entities import (
    FACT_COLUMNS,
    EntityRow,
    admitted_names,
    confirmed_only_clause,
    fact_from_row,
    fact_values,
)
from convmem.store.ranking import Window
from convmem.store.sql.entity_sources import recompute_names
from convmem.store.sql.txn import SqlTxn


class EntityRows(SqlTxn):
    if TYPE_CHECKING:  # the backend's: entities with their names, as its SQL aggregates them

        def _entities(self, tenant: str, where: str, params: tuple[object, ...], tail: str = "",
                      tail_params: tuple[object, ...] = ()) -> list[Entity]: ...  # fmt: skip

    # --- reads ----------------------------------------------------------------------------------

    def get_entity(self, tenant: str, user: str, entity_id: str) -> Entity:
        found = self._entities(
            tenant, self._d.sql("AND e.user_id = ? AND e.id = ?"), (user, entity_id)
        )
        if not found:
            raise NotFound("entity", entity_id)
        rows = self._run(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? ORDER BY said_at DESC, id",
            (tenant, user, entity_id),
        ).fetchall()
        facts = tuple(fact_from_row(row, self._d.codec) for row in rows)
        return Entity(**{**found[0].__dict__, "facts": facts})

    def _users(self, user: str, scopes: Sequence[str] | None) -> tuple[str, tuple[object, ...]]:
        """The filter (and its parameters) on the user's entities, in these scopes if given."""
        if scopes is None:
            return "AND e.user_id = ?", (user,)
        return f"AND e.user_id = ? AND e.scope {self._d.one_of}", (user, self._d.ids(scopes))

    def list_entities(
        self, tenant: str, user: str, *, scopes: Sequence[str] | None, limit: int, offset: int
    ) -> list[Entity]:
        where, params = self._users(user, scopes)
        return self._entities(tenant, self._d.sql(where), params, self._d.sql("LIMIT ? OFFSET ?"),
                              (limit, offset))  # fmt: skip

    def read_named_entity_facts_ahead(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str],
        outside_conversation: str | None, confirmed_only: bool, limit: int,
    ) -> None:  # fmt: skip
        """Nothing here: a statement runs when it is sent (PostgreSQL queues the reads)."""

    def read_counted_entity_turns_ahead(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str], *,
        window: Window, limit: int, cap: int,
    ) -> None:  # fmt: skip
        """Nothing here: a statement runs when it is sent (PostgreSQL queues the reads)."""

    def entities_named(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str] | None
    ) -> list[Entity]:
        if not keys or (scopes is not None and not scopes):
            return []
        self._lock_owner(tenant, user)  # in a write: what is read here is merged into
        d = self._d
        where, params = self._users(user, scopes)
        where += (
            " AND e.id IN (SELECT n.entity_id FROM entity_names n WHERE n.tenant_id = ? "
            f"AND n.user_id = ? AND n.key {d.one_of})"
        )
        return self._entities(tenant, d.sql(where), (*params, tenant, user, d.ids(keys)))

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
        d = self._d
        rows = self._run(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            f"AND entity_id {d.one_of} AND (CAST(? AS TEXT) IS NULL OR conversation_id = ?) "
            "AND (CAST(? AS TEXT) IS NULL OR conversation_id <> ?) "
            f"{confirmed_only_clause(confirmed_only)}ORDER BY {d.unindexed}said_at DESC, id "
            "LIMIT ?",
            (
                tenant, user, d.ids(entity_ids), conversation_id, conversation_id,
                outside_conversation, outside_conversation, limit,
            ),
        ).fetchall()  # fmt: skip
        return [fact_from_row(row, d.codec) for row in rows]

    def entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> EntityFact:
        row = self._run(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? AND id = ?",
            (tenant, user, entity_id, fact_id),
        ).fetchone()
        if row is None:
            raise NotFound("fact", fact_id)
        return fact_from_row(row, self._d.codec)

    def confirmed_fact_sources(self, tenant: str, user: str) -> set[tuple[str, str]]:
        rows = self._run(
            "SELECT message_id, text FROM entity_facts WHERE tenant_id = ? AND user_id = ? "
            "AND status = 'confirmed'",
            (tenant, user),
        ).fetchall()
        return {(row[0], row[1]) for row in rows}

    # --- writes ---------------------------------------------------------------------------------

    def put_entity(self, tenant: str, user: str, admitted: Admitted[EntityRow]) -> None:
        row = admitted.value
        self._lock_owner(tenant, user)
        self._run(
            "INSERT INTO entities (tenant_id, id, user_id, scope, name, type, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, id) DO UPDATE SET "
            "name = excluded.name, type = excluded.type",
            (tenant, row.id, user, row.scope, row.name, row.type, self._d.time(row.created_at)),
        )
        self._run_many(
            "INSERT INTO entity_names (tenant_id, entity_id, key, user_id, scope, alias) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(tenant, row.id, key, user, row.scope, alias) for alias, key in row.aliases],
        )

    def add_entity_name_sources(
        self, tenant: str, user: str, admitted: Admitted[EntityRow], message_id: str,
        names: Sequence[tuple[str, str]],
    ) -> None:  # fmt: skip
        entity_id, names = admitted.value.id, admitted_names(admitted, names)
        self._run_many(
            "INSERT INTO entity_name_sources (tenant_id, entity_id, key, message_id, user_id, "
            "alias) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(tenant, entity_id, key, message_id, user, alias) for alias, key in names],
        )

    def add_entity_facts(
        self, tenant: str, user: str, admitted: Admitted[tuple[EntityFact, ...]]
    ) -> None:
        self._run_many(
            f"INSERT INTO entity_facts (tenant_id, user_id, {FACT_COLUMNS}) "
            "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS "
            "(SELECT 1 FROM entities WHERE tenant_id = ? AND id = ? AND user_id = ?)",
            [(tenant, user, *fact_values(f, self._d.time), tenant, f.entity_id, user)
             for f in admitted.value],
        )  # fmt: skip

    def set_entity_fact_status(
        self, tenant: str, user: str, entity_id: str, fact_id: str, status: FactStatus
    ) -> None:
        row = self._returned(
            "UPDATE entity_facts SET status = ? WHERE tenant_id = ? AND user_id = ? "
            "AND entity_id = ? AND id = ? RETURNING id",
            (status, tenant, user, entity_id, fact_id),
        )
        if row is None:
            raise NotFound("fact", fact_id)

    def delete_entity_fact(self, tenant: str, user: str, entity_id: str, fact_id: str) -> None:
        self._lock_owner(tenant, user)
        if not self._delete_facts(
            tenant, "user_id = ? AND entity_id = ? AND id = ?", (user, entity_id, fact_id)
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
        recompute_names(self._db, self._d, tenant, ids)
        orphan = (
            f"{self._d.one_of} AND NOT EXISTS (SELECT 1 FROM entity_facts f "
            "WHERE f.tenant_id = ? AND f.entity_id = {0})"
        )
        self._run(
            "DELETE FROM entity_names WHERE tenant_id = ? AND entity_id "
            + orphan.format("entity_names.entity_id"),
            (tenant, self._d.ids(ids), tenant),
        )
        self._run(
            "DELETE FROM entities WHERE tenant_id = ? AND id " + orphan.format("entities.id"),
            (tenant, self._d.ids(ids), tenant),
        )

    def _delete_facts(self, tenant: str, where: str, params: tuple[object, ...]) -> int:
        rows = self._run(
            f"DELETE FROM entity_facts WHERE tenant_id = ? AND {where} RETURNING entity_id",
            (tenant, *params),
        ).fetchall()
        if rows:
            self._drop_entities_without_facts(tenant, (row[0] for row in rows))
        return len(rows)

    def delete_user_entities(self, tenant: str, user: str) -> int:
        self._lock_owner(tenant, user)
        return self._cascade().erase_all(tenant, "entity", user)

    def delete_entity_facts_before(self, tenant: str, cutoff: datetime) -> int:
        return self._delete_facts(tenant, "said_at < ?", (self._d.time(cutoff),))
