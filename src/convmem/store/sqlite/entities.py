"""SQLite rows of entity memory (migrations m050, m064, m066): entities, their names and the
messages that said them, their facts (with who said each and whether the user confirmed it)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from convmem.model.entities import Entity
from convmem.store.entities import (
    ENTITY_SELECT,
    EntityTurnRow,
    entity_from_row,
)
from convmem.store.ranking import Window
from convmem.store.sql.entities import EntityRows
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.ranking import _in_window as in_window  # the retrievers' window filter
from convmem.store.sqlite.sql import TEXT_CODEC

_JOINED = "FROM entities e JOIN entity_facts f ON f.tenant_id = e.tenant_id AND f.entity_id = e.id "


def _ids(values: Iterable[str]) -> str:
    return json.dumps(list(values))


class EntityTxnMixin(EntityRows):
    _db: Statements

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
