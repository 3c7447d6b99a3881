"""SQLite's staging of an embedder switch's vectors (the rest:
``convmem.store.sql.embedder_switch``)."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.search_index import MemoryVector, MessageVector
from convmem.store.sql.embedder_switch import EmbedderSwitchRows
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.vectors import to_blob


class EmbedderSwitchTxnMixin(EmbedderSwitchRows):
    _db: Statements

    def stage_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO staged_message_vectors (tenant_id, message_id, embedder, "
            "vector) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM message_index "
            "WHERE tenant_id = ? AND message_id = ?) AND EXISTS (SELECT 1 FROM "
            "embedder_switches WHERE tenant_id = ? AND target = ?)",
            [(tenant, v.message_id, embedder, to_blob(v.vector), tenant, v.message_id, tenant,
              embedder) for v in vectors],
        )  # fmt: skip

    def stage_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO staged_memory_vectors (tenant_id, memory_id, user_id, "
            "embedder, vector) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories "
            "WHERE tenant_id = ? AND id = ? AND user_id = ?) AND EXISTS (SELECT 1 FROM "
            "embedder_switches WHERE tenant_id = ? AND target = ?)",
            [(tenant, v.memory_id, user, embedder, to_blob(v.vector), tenant, v.memory_id, user,
              tenant, embedder) for v in vectors],
        )  # fmt: skip
