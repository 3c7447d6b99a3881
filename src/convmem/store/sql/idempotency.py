"""Idempotency keys' rows (``convmem.store.idempotency``), for both SQL backends."""

from __future__ import annotations

from datetime import datetime

from convmem.store.idempotency import KeptWrite
from convmem.store.sql.txn import SqlTxn

_COLUMNS = "key, kind, fingerprint, created_at, message_id, memory_id, result"


class IdempotencyRows(SqlTxn):
    def kept_write(self, tenant: str, user: str, key: str, since: datetime) -> KeptWrite | None:
        d = self._d
        row = self._run(
            f"SELECT {_COLUMNS} FROM idempotency_keys "
            "WHERE tenant_id = ? AND user_id = ? AND key = ? AND created_at >= ?",
            (tenant, user, key, d.time(since)),
        ).fetchone()
        if row is None:
            return None
        return KeptWrite(row[0], row[1], row[2], d.codec.time(row[3]), row[4], row[5],
                         dict(d.codec.json(row[6]) or {}))  # fmt: skip

    def keep_write(self, tenant: str, user: str, write: KeptWrite, expired: datetime) -> bool:
        d = self._d
        self._run(
            "DELETE FROM idempotency_keys WHERE tenant_id = ? AND user_id = ? AND created_at < ?",
            (tenant, user, d.time(expired)),
        )
        # a concurrent write holding the key (PostgreSQL): this waits for it, then keeps nothing
        kept = self._returned(
            f"INSERT INTO idempotency_keys (tenant_id, user_id, {_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
            (tenant, user, write.key, write.kind, write.fingerprint, d.time(write.created_at),
             write.message_id, write.memory_id, d.json(dict(sorted(write.result.items())))),
        )  # fmt: skip
        return kept is not None

    def forget_kept_writes(self, tenant: str, before: datetime) -> int:
        cursor = self._run(
            "DELETE FROM idempotency_keys WHERE tenant_id = ? AND created_at < ?",
            (tenant, self._d.time(before)),
        )
        return max(self._changed(cursor), 0)
