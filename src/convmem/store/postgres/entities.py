"""PostgreSQL rows of entity memory (migrations m013, m019, m021): entities, their names and the
messages that said them, their facts.

A user's entity writes are serialised by the owner lock (``TxnBase._lock_owner``), taken before
a write transaction reads the names it will merge into: two turns naming the same new person in
two conversations at once make one entity, not two."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.model.entities import Entity
from convmem.store.entities import (
    ENTITY_SELECT,
    EntityTurnRow,
    entity_from_row,
)
from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.search import _window as window_clause  # the retrievers' window filter
from convmem.store.ranking import Window
from convmem.store.rows import DECODED
from convmem.store.sql.entities import EntityRows

_JOINED = "FROM entities e JOIN entity_facts f ON f.tenant_id = e.tenant_id AND f.entity_id = e.id "


class EntityTxnMixin(CascadeTxnMixin, EntityRows):
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
