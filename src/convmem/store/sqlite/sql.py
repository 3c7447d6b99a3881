"""SQL and row decoding shared by the SQLite mixins, and SQLite's ``Dialect``."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from convmem.store.dialect import Dialect
from convmem.store.rows import Codec

# The path from a message towards the root, at most ``limit`` messages, as (id, n) with n = 0 at
# the start. Parameters: start id, tenant, limit.
CHAIN_CTE = """
    WITH RECURSIVE chain(id, n) AS (
        SELECT ?, 0
        UNION ALL
        SELECT m.parent_id, chain.n + 1 FROM chain
        JOIN messages m ON m.tenant_id = ? AND m.id = chain.id
        WHERE m.parent_id IS NOT NULL AND chain.n + 1 < ?
    )
"""


def _json_text(value: str) -> Any:
    # most metadata is empty: skip the parser for it
    return {} if value == "{}" else json.loads(value)


# SQLite hands JSON and times back as the text they were stored as.
TEXT_CODEC = Codec(json=_json_text, time=datetime.fromisoformat)


def utc_text(value: datetime) -> str:
    """One text form for every stored time, so SQL compares them in order."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _id_list(ids: Sequence[Any]) -> str:
    return json.dumps(list(ids))


def _json_document(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _iso(value: datetime) -> str:
    return value.isoformat()


SQLITE = Dialect(
    mark="?",
    one_of="IN (SELECT value FROM json_each(?))",
    ids=_id_list,
    json_text="json_extract({column}, '$.{key}')",
    codec=TEXT_CODEC,
    json=_json_document,
    time=utc_text,
    iso=_iso,
    flag=int,
    row_order="m.rowid",
    index_order="i.id",
    distinct_from="IS NOT",
    bytewise="",
    unindexed="+",
)
