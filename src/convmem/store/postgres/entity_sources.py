"""PostgreSQL: the messages that said each entity name (migration m019) and the recompute of an
entity's names after its facts lost messages (``convmem.store.sql.entity_sources``)."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.entity_sources import sources_to_backfill
from convmem.store.postgres.connection import Connection
from convmem.store.postgres.rows import POSTGRES
from convmem.store.sql.entity_sources import recompute_names as shared_recompute


def recompute_names(db: Connection, tenant: str, entity_ids: Sequence[str]) -> None:
    """``convmem.store.sql.entity_sources.recompute_names`` on PostgreSQL (as migration m019
    calls it)."""
    shared_recompute(db, POSTGRES, tenant, entity_ids)


def m019_entity_name_sources(db: Connection) -> None:
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
        )
        """
    )
    db.execute("CREATE INDEX entity_name_sources_user ON entity_name_sources (tenant_id, user_id)")
    with db.cursor() as cursor:  # one prepared statement for every row, not one call each
        cursor.executemany(
            "INSERT INTO entity_name_sources (tenant_id, entity_id, key, message_id, user_id, "
            "alias) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            sources_to_backfill(db),
        )
    by_tenant: dict[str, list[str]] = {}
    for tenant, entity_id in db.execute("SELECT tenant_id, id FROM entities").fetchall():
        by_tenant.setdefault(tenant, []).append(entity_id)
    for tenant, ids in by_tenant.items():
        recompute_names(db, tenant, ids)
