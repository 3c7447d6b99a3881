"""PostgreSQL's part of long-term memory (the rest: ``convmem.store.sql.memories``): the owner
lexeme a memory's tsvector carries, and what an export leaves out of its rows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.fulltext import FORM_COLUMNS
from convmem.store.postgres.rows import export_value
from convmem.store.sql.memories import MemoryRows


def memory_owner_lexeme(tenant: str, user: str) -> str:
    """The lexeme a user's memories carry in their tsvector (hex: no stemming, no stop word)."""
    return "m" + tenant.encode().hex() + "x" + user.encode().hex()


class MemoryTxnMixin(CascadeTxnMixin, MemoryRows):
    # columns that are internal machinery, not the user's data
    _NOT_EXPORTED: ClassVar[frozenset[str]] = frozenset(
        {"seq", "tsv", "owner_lexeme", *FORM_COLUMNS}
    )

    def _memory_index_columns(self, tenant: str, user: str) -> Mapping[str, Any]:
        return {"owner_lexeme": memory_owner_lexeme(tenant, user)}

    def _exported(self, value: Any) -> Any:
        """JSON documents as the JSON text SQLite exports hold, the rest JSON-ready."""
        if isinstance(value, dict | list):
            return json.dumps(value)
        if isinstance(value, bool):
            return int(value)
        return export_value(value)
