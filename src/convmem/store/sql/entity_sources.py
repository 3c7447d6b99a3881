"""The recompute of entities' names after their facts lost messages, for both SQL backends (the
rules: ``convmem.store.entity_sources``). Message ids are ordered bytewise on both (PostgreSQL's
"C" collation, SQLite's own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from convmem.store.dialect import Dialect

_SOURCE = "FROM entity_name_sources s WHERE s.tenant_id = ? AND s.entity_id = {0}"


def recompute_names(db: Any, d: Dialect, tenant: str, entity_ids: Sequence[str]) -> None:
    """Names of these entities from the sources left, through ``db`` (anything with
    ``execute(sql, params)``); in the order of the module docstring of
    ``convmem.store.entity_sources``."""
    ids = d.ids(sorted(set(entity_ids)))
    one_of, by_message = d.one_of, f"s.message_id{d.bytewise}"

    def run(sql: str, params: tuple[Any, ...]) -> None:
        db.execute(d.sql(sql), params)

    run(
        f"DELETE FROM entity_name_sources WHERE tenant_id = ? AND entity_id {one_of} "
        "AND NOT EXISTS (SELECT 1 FROM entity_facts f WHERE f.tenant_id = ? "
        "AND f.entity_id = entity_name_sources.entity_id "
        "AND f.message_id = entity_name_sources.message_id)",
        (tenant, ids, tenant),
    )
    own = _SOURCE.format("entity_names.entity_id") + " AND s.key = entity_names.key"
    run(
        f"DELETE FROM entity_names WHERE tenant_id = ? AND entity_id {one_of} "
        f"AND NOT EXISTS (SELECT 1 {own})",
        (tenant, ids, tenant),
    )
    run(
        f"UPDATE entity_names SET alias = (SELECT s.alias {own} ORDER BY {by_message} LIMIT 1) "
        f"WHERE tenant_id = ? AND entity_id {one_of} "
        f"AND NOT EXISTS (SELECT 1 {own} AND s.alias = entity_names.alias)",
        (tenant, tenant, ids, tenant),
    )
    mine = _SOURCE.format("entities.id")
    run(
        f"UPDATE entities SET name = (SELECT s.alias {mine} "
        f"ORDER BY length(s.key) DESC, {by_message} LIMIT 1) "
        f"WHERE tenant_id = ? AND id {one_of} AND EXISTS (SELECT 1 {mine}) "
        f"AND NOT EXISTS (SELECT 1 {mine} AND s.alias = entities.name)",
        (tenant, tenant, ids, tenant, tenant),
    )
    for table, column in (("entity_facts", "entity_id"), ("entity_names", "entity_id"),
                          ("entities", "id")):  # fmt: skip
        nameless = _SOURCE.format(f"{table}.{column}")
        run(
            f"DELETE FROM {table} WHERE tenant_id = ? AND {column} {one_of} "
            f"AND NOT EXISTS (SELECT 1 {nameless})",
            (tenant, ids, tenant),
        )
