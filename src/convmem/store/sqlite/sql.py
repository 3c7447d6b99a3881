"""SQL and row decoding shared by the SQLite mixins."""

import json
from datetime import datetime
from typing import Any

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
