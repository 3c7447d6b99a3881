"""PostgreSQL primitives for idempotency keys (``convmem.store.idempotency``)."""

from __future__ import annotations

from datetime import datetime

from psycopg.types.json import Jsonb

from convmem.store.idempotency import KeptWrite
from convmem.store.postgres.rows import TxnBase

_COLUMNS = "key, kind, fingerprint, created_at, message_id, memory_id, result"


class IdempotencyTxnMixin(TxnBase):
    def kept_write(self, tenant: str, user: str, key: str, since: datetime) -> KeptWrite | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM idempotency_keys "
            "WHERE tenant_id = %s AND user_id = %s AND key = %s AND created_at >= %s",
            (tenant, user, key, since),
        ).fetchone()
        if row is None:
            return None
        return KeptWrite(row[0], row[1], row[2], row[3], row[4], row[5], dict(row[6] or {}))

    def keep_write(self, tenant: str, user: str, write: KeptWrite, expired: datetime) -> bool:
        self._db.execute(
            "DELETE FROM idempotency_keys "
            "WHERE tenant_id = %s AND user_id = %s AND created_at < %s",
            (tenant, user, expired),
        )
        # a concurrent write holding the key: this waits for it, then keeps nothing
        row = self._db.execute(
            f"INSERT INTO idempotency_keys (tenant_id, user_id, {_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1",
            (tenant, user, write.key, write.kind, write.fingerprint, write.created_at,
             write.message_id, write.memory_id, Jsonb(dict(write.result))),
        ).fetchone()  # fmt: skip
        return row is not None

    def forget_kept_writes(self, tenant: str, before: datetime) -> int:
        cursor = self._db.execute(
            "DELETE FROM idempotency_keys WHERE tenant_id = %s AND created_at < %s",
            (tenant, before),
        )
        return max(cursor.rowcount, 0)
