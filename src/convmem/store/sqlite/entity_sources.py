"""SQLite: the messages that said each entity name (migration m064) and the recompute of an
entity's names after its facts lost messages (``convmem.store.sql.entity_sources``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from convmem.store.entity_sources import sources_to_backfill
from convmem.store.sql.entity_sources import recompute_names as shared_recompute
from convmem.store.sqlite.sql import SQLITE


def recompute_names(db: Any, tenant: str, entity_ids: str) -> None:
    """``convmem.store.sql.entity_sources.recompute_names`` for the entities in ``entity_ids``
    (a JSON list, as migration m064 passes them)."""
    shared_recompute(db, SQLITE, tenant, json.loads(entity_ids))


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
