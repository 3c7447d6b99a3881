"""PostgreSQL primitives for API keys and the last assembled request of each conversation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from convmem.errors import NotFound
from convmem.model.keys import ApiKey, AssemblyRecord
from convmem.model.page_sessions import PageSession
from convmem.store.keys import StoredKey, StoredPageSession
from convmem.store.postgres.rows import TxnBase
from convmem.store.rows import DECODED, KEY_COLUMNS, api_key_from_row, key_purposes

PAGE_SESSION_COLUMNS = (
    "id, tenant_id, acts_for_user, kind, created_at, expires_at, last_seen_at, ended_at"
)


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

    def find_page_session(self, tenant: str, session_id: str) -> StoredPageSession | None:
        row = self._db.execute(
            f"SELECT {PAGE_SESSION_COLUMNS}, secret_sha256 FROM page_sessions "
            "WHERE tenant_id = %s AND id = %s",
            (tenant, session_id),
        ).fetchone()
        if row is None:
            return None
        return StoredPageSession(PageSession(*row[:8]), row[8])

    def insert_page_session(self, session: PageSession, secret_sha256: str) -> None:
        self._db.execute(
            f"INSERT INTO page_sessions ({PAGE_SESSION_COLUMNS}, secret_sha256) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (session.id, session.tenant_id, session.user_id, session.kind, session.created_at,
             session.expires_at, session.last_seen_at, session.ended_at, secret_sha256),
        )  # fmt: skip

    def end_page_session(self, tenant: str, session_id: str, at: datetime) -> bool:
        row = self._db.execute(
            "UPDATE page_sessions SET ended_at = %s "
            "WHERE tenant_id = %s AND id = %s AND ended_at IS NULL RETURNING id",
            (at, tenant, session_id),
        ).fetchone()
        return row is not None

    def touch_page_session(self, tenant: str, session_id: str, at: datetime) -> None:
        self._db.execute(
            "UPDATE page_sessions SET last_seen_at = %s WHERE tenant_id = %s AND id = %s",
            (at, tenant, session_id),
        )

    def last_assembly(self, tenant: str, user: str, conversation_id: str) -> AssemblyRecord | None:
        return self._last_assembly_of(self._send_last_assembly(tenant, user, conversation_id))

    def _send_last_assembly(
        self, tenant: str, user: str, conversation_id: str
    ) -> psycopg.Cursor[Any]:
        """The read, queued (pipeline mode): ``_last_assembly_of`` takes its answer."""
        return self._db.execute(
            "SELECT conversation_id, leaf_id, at, report FROM last_assemblies "
            "WHERE tenant_id = %s AND user_id = %s AND conversation_id = %s",
            (tenant, user, conversation_id),
        )

    @staticmethod
    def _last_assembly_of(sent: psycopg.Cursor[Any]) -> AssemblyRecord | None:
        row = sent.fetchone()
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
