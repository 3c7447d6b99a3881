"""SQLite: the messages that said each entity name (migration m064) and the recompute of an
entity's names after its facts lost messages (the rules: ``convmem.store.entity_sources``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol

from convmem.store.entity_sources import sources_to_backfill


class _Executes(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> sqlite3.Cursor: ...


_IN = "IN (SELECT value FROM json_each(?))"
_SOURCE = "FROM entity_name_sources s WHERE s.tenant_id = ? AND s.entity_id = {0}"


def recompute_names(db: _Executes, tenant: str, entity_ids: str) -> None:
    """Names of the entities in ``entity_ids`` (a JSON list) from the sources left; in the
    order of the module docstring of ``convmem.store.entity_sources``."""
    db.execute(
        f"DELETE FROM entity_name_sources WHERE tenant_id = ? AND entity_id {_IN} "
        "AND NOT EXISTS (SELECT 1 FROM entity_facts f WHERE f.tenant_id = ? "
        "AND f.entity_id = entity_name_sources.entity_id "
        "AND f.message_id = entity_name_sources.message_id)",
        (tenant, entity_ids, tenant),
    )
    own = _SOURCE.format("entity_names.entity_id") + " AND s.key = entity_names.key"
    db.execute(
        f"DELETE FROM entity_names WHERE tenant_id = ? AND entity_id {_IN} "
        f"AND NOT EXISTS (SELECT 1 {own})",
        (tenant, entity_ids, tenant),
    )
    db.execute(
        f"UPDATE entity_names SET alias = (SELECT s.alias {own} ORDER BY s.message_id LIMIT 1) "
        f"WHERE tenant_id = ? AND entity_id {_IN} "
        f"AND NOT EXISTS (SELECT 1 {own} AND s.alias = entity_names.alias)",
        (tenant, tenant, entity_ids, tenant),
    )
    mine = _SOURCE.format("entities.id")
    db.execute(
        f"UPDATE entities SET name = (SELECT s.alias {mine} "
        "ORDER BY length(s.key) DESC, s.message_id LIMIT 1) "
        f"WHERE tenant_id = ? AND id {_IN} AND EXISTS (SELECT 1 {mine}) "
        f"AND NOT EXISTS (SELECT 1 {mine} AND s.alias = entities.name)",
        (tenant, tenant, entity_ids, tenant, tenant),
    )
    nameless = f"{_IN} AND NOT EXISTS (SELECT 1 {_SOURCE})"
    for table, column in (("entity_facts", "entity_id"), ("entity_names", "entity_id"),
                          ("entities", "id")):  # fmt: skip
        db.execute(
            f"DELETE FROM {table} WHERE tenant_id = ? AND {column} "
            + nameless.format(f"{table}.{column}"),
            (tenant, entity_ids, tenant),
        )


def m064_entity_name_sources(db: sqlite3.Connection) -> None:
    # which messages said each entity name, so a name goes with the last of them; existing
    # names are attributed to the messages whose facts say them (convmem.store.entity_sources)
    db.execute(
        """
        CREATE TABLE entity_name_sources (
            tenant_id TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            key TEXT NOT NULL,
            message_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            alias TEXT NOT NULL,
            PRIMARY KEY (tenant_id, entity_id, key, message_id)
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX entity_name_sources_user ON entity_name_sources (tenant_id, user_id)")
    db.executemany(
        "INSERT OR IGNORE INTO entity_name_sources (tenant_id, entity_id, key, message_id, "
        "user_id, alias) VALUES (?, ?, ?, ?, ?, ?)",
        sources_to_backfill(db),
    )
    tenants = [row[0] for row in db.execute("SELECT DISTINCT tenant_id FROM entities")]
    for tenant in tenants:
        ids = db.execute(
            "SELECT json_group_array(id) FROM entities WHERE tenant_id = ?", (tenant,)
        ).fetchone()[0]
        recompute_names(db, tenant, ids)
