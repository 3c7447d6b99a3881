"""PostgreSQL primitives for API keys and the last assembled request of each conversation."""

from __future__ import annotations

from datetime import datetime

from psycopg.types.json import Jsonb

from convmem.errors import NotFound
from convmem.model.keys import ApiKey, AssemblyRecord
from convmem.store.keys import StoredKey
from convmem.store.postgres.rows import TxnBase
from convmem.store.rows import DECODED, KEY_COLUMNS, api_key_from_row, key_purposes


class KeyTxnMixin(TxnBase):
    def find_api_key(self, key_id: str) -> StoredKey | None:
        row = self._db.execute(
            f"SELECT {KEY_COLUMNS}, secret_sha256 FROM api_keys WHERE id = %s", (key_id,)
        ).fetchone()
        return None if row is None else StoredKey(api_key_from_row(row, DECODED), row[9])

    def list_api_keys(self, tenant: str) -> list[ApiKey]:
        rows = self._db.execute(
            f"SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant_id = %s ORDER BY id", (tenant,)
        ).fetchall()
        return [api_key_from_row(row, DECODED) for row in rows]

    def insert_api_key(self, tenant: str, key: ApiKey, secret_sha256: str) -> None:
        self._db.execute(
            f"INSERT INTO api_keys ({KEY_COLUMNS}, secret_sha256) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (key.id, tenant, key.role, key.user_id, key.name, key.created_by, key.created_at,
             key.revoked_at, key_purposes(key), secret_sha256),
        )  # fmt: skip

    def revoke_api_key(self, tenant: str, key_id: str, at: datetime) -> ApiKey:
        row = self._db.execute(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, %s) "
            f"WHERE tenant_id = %s AND id = %s RETURNING {KEY_COLUMNS}",
            (at, tenant, key_id),
        ).fetchone()
        if row is None:
            raise NotFound("api key", key_id)
        return api_key_from_row(row, DECODED)

    def last_assembly(self, tenant: str, user: str, conversation_id: str) -> AssemblyRecord | None:
        row = self._db.execute(
            "SELECT conversation_id, leaf_id, at, report FROM last_assemblies "
            "WHERE tenant_id = %s AND user_id = %s AND conversation_id = %s",
            (tenant, user, conversation_id),
        ).fetchone()
        return None if row is None else AssemblyRecord(row[0], row[1], row[2], row[3])

    def put_last_assembly(self, tenant: str, user: str, record: AssemblyRecord) -> None:
        self._db.execute(
            "INSERT INTO last_assemblies (tenant_id, conversation_id, user_id, leaf_id, at, "
            "report) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (tenant_id, conversation_id) DO UPDATE "
            "SET leaf_id = EXCLUDED.leaf_id, at = EXCLUDED.at, report = EXCLUDED.report",
            (tenant, record.conversation_id, user, record.leaf_id, record.at,
             Jsonb(record.report)),
        )  # fmt: skip
