"""PostgreSQL's part of the retention sweeps (the rest: ``convmem.store.sql.lifecycle``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from convmem.store.postgres.rows import TxnBase
from convmem.store.sql.lifecycle import LifecycleTxnMixin as SharedLifecycle


class LifecycleTxnMixin(TxnBase, SharedLifecycle):
    if TYPE_CHECKING:  # the search mixin's: index rows go and their search generations move

        def forget_indexed(self, tenant: str, message_ids: Sequence[str]) -> None: ...

    def delete_index_rows_before(self, tenant: str, message_cutoff: str, limit: int) -> int:
        rows = self._run(
            "SELECT message_id FROM message_index WHERE tenant_id = ? AND message_id < ? "
            "ORDER BY message_id LIMIT ?",
            (tenant, message_cutoff, limit),
        ).fetchall()
        if rows:
            self.forget_indexed(tenant, [row[0] for row in rows])
        return len(rows)
