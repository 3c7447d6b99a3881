"""SQLite primitives for idempotency keys (``convmem.store.idempotency``)."""

from __future__ import annotations

import json
from datetime import datetime

from convmem.store.idempotency import KeptWrite
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.memories import utc_text

_COLUMNS = "key, kind, fingerprint, created_at, message_id, memory_id, result"


class IdempotencyTxnMixin:
    _db: Statements

    def kept_write(self, tenant: str, user: str, key: str, since: datetime) -> KeptWrite | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM idempotency_keys "
            "WHERE tenant_id = ? AND user_id = ? AND key = ? AND created_at >= ?",
            (tenant, user, key, utc_text(since)),
        ).fetchone()
        if row is None:
            return None
        return KeptWrite(row[0], row[1], row[2], datetime.fromisoformat(row[3]), row[4], row[5],
                         json.loads(row[6]))  # fmt: skip

    def keep_write(self, tenant: str, user: str, write: KeptWrite, expired: datetime) -> bool:
        self._db.execute(
            "DELETE FROM idempotency_keys WHERE tenant_id = ? AND user_id = ? AND created_at < ?",
            (tenant, user, utc_text(expired)),
        )
        inserted = self._db.execute(
            f"INSERT INTO idempotency_keys (tenant_id, user_id, {_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (tenant, user, write.key, write.kind, write.fingerprint, utc_text(write.created_at),
             write.message_id, write.memory_id, json.dumps(dict(write.result), sort_keys=True)),
        ).rowcount  # fmt: skip
        return bool(inserted)

    def forget_kept_writes(self, tenant: str, before: datetime) -> int:
        return int(
            self._db.execute(
                "DELETE FROM idempotency_keys WHERE tenant_id = ? AND created_at < ?",
                (tenant, utc_text(before)),
            ).rowcount
        )
