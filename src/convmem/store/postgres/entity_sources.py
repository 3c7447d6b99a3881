"""PostgreSQL: the messages that said each entity name (migration m019) and the recompute of an
entity's names after its facts lost messages (the rules: ``convmem.store.entity_sources``).
Message ids are ordered with the "C" collation: bytewise, as SQLite orders them."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.entity_sources import sources_to_backfill
from convmem.store.postgres.connection import Connection

_SOURCE = "FROM entity_name_sources s WHERE s.tenant_id = %s AND s.entity_id = {0}"


def recompute_names(db: Connection, tenant: str, entity_ids: Sequence[str]) -> None:
    """Names of these entities from the sources left; in the order of the module docstring of
    ``convmem.store.entity_sources``."""
    ids = sorted(set(entity_ids))
    db.execute(
        "DELETE FROM entity_name_sources WHERE tenant_id = %s AND entity_id = ANY(%s) "
        "AND NOT EXISTS (SELECT 1 FROM entity_facts f WHERE f.tenant_id = %s "
        "AND f.entity_id = entity_name_sources.entity_id "
        "AND f.message_id = entity_name_sources.message_id)",
        (tenant, ids, tenant),
    )
    own = _SOURCE.format("entity_names.entity_id") + " AND s.key = entity_names.key"
    db.execute(
        "DELETE FROM entity_names WHERE tenant_id = %s AND entity_id = ANY(%s) "
        f"AND NOT EXISTS (SELECT 1 {own})",
        (tenant, ids, tenant),
    )
    db.execute(
        f"UPDATE entity_names SET alias = (SELECT s.alias {own} "
        'ORDER BY s.message_id COLLATE "C" LIMIT 1) '
        "WHERE tenant_id = %s AND entity_id = ANY(%s) "
        f"AND NOT EXISTS (SELECT 1 {own} AND s.alias = entity_names.alias)",
        (tenant, tenant, ids, tenant),
    )
    mine = _SOURCE.format("entities.id")
    db.execute(
        f"UPDATE entities SET name = (SELECT s.alias {mine} "
        'ORDER BY length(s.key) DESC, s.message_id COLLATE "C" LIMIT 1) '
        f"WHERE tenant_id = %s AND id = ANY(%s) AND EXISTS (SELECT 1 {mine}) "
        f"AND NOT EXISTS (SELECT 1 {mine} AND s.alias = entities.name)",
        (tenant, tenant, ids, tenant, tenant),
    )
    nameless = "= ANY(%s) AND NOT EXISTS (SELECT 1 " + _SOURCE + ")"
    for table, column in (("entity_facts", "entity_id"), ("entity_names", "entity_id"),
                          ("entities", "id")):  # fmt: skip
        db.execute(
            f"DELETE FROM {table} WHERE tenant_id = %s AND {column} "
            + nameless.format(f"{table}.{column}"),
            (tenant, ids, tenant),
        )


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
