"""SQLite's part of the retention sweeps (the rest: ``convmem.store.sql.lifecycle``)."""

from __future__ import annotations

from convmem.store.sql.lifecycle import LifecycleTxnMixin as SharedLifecycle


class LifecycleTxnMixin(SharedLifecycle):
    def delete_index_rows_before(self, tenant: str, message_cutoff: str, limit: int) -> int:
        # the FTS5 entries and the search generations follow by trigger; the vector is a column
        return self._run(
            "DELETE FROM message_index WHERE tenant_id = ? AND message_id IN (SELECT message_id "
            "FROM message_index WHERE tenant_id = ? AND message_id < ? ORDER BY message_id "
            "LIMIT ?)",
            (tenant, tenant, message_cutoff, limit),
        ).rowcount
