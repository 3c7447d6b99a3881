"""API keys, the page's sessions and the last assembled request of each conversation, for both
SQL backends (mixed into the backend's transaction)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from convmem.errors import NotFound
from convmem.model.keys import ApiKey, AssemblyRecord
from convmem.model.page_sessions import PageSession
from convmem.store.keys import StoredKey, StoredPageSession
from convmem.store.rows import KEY_COLUMNS, api_key_from_row, key_purposes
from convmem.store.sql.txn import Cursor, SqlTxn

PAGE_SESSION_COLUMNS = (
    "id, tenant_id, acts_for_user, kind, created_at, expires_at, last_seen_at, ended_at"
)


class KeyTxnMixin(SqlTxn):
    def _optional_time(self, value: datetime | None) -> Any:
        return None if value is None else self._d.time(value)

    def find_api_key(self, key_id: str) -> StoredKey | None:
        row = self._run(
            f"SELECT {KEY_COLUMNS}, secret_sha256 FROM api_keys WHERE id = ?", (key_id,)
        ).fetchone()
        return None if row is None else StoredKey(api_key_from_row(row, self._d.codec), row[9])

    def list_api_keys(self, tenant: str) -> list[ApiKey]:
        rows = self._run(
            f"SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY id", (tenant,)
        ).fetchall()
        return [api_key_from_row(row, self._d.codec) for row in rows]

    def insert_api_key(self, tenant: str, key: ApiKey, secret_sha256: str) -> None:
        self._run(
            f"INSERT INTO api_keys ({KEY_COLUMNS}, secret_sha256) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key.id, tenant, key.role, key.user_id, key.name, key.created_by,
             self._d.time(key.created_at), self._optional_time(key.revoked_at), key_purposes(key),
             secret_sha256),
        )  # fmt: skip

    def revoke_api_key(self, tenant: str, key_id: str, at: datetime) -> ApiKey:
        row = self._returned(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) "
            f"WHERE tenant_id = ? AND id = ? RETURNING {KEY_COLUMNS}",
            (self._d.time(at), tenant, key_id),
        )
        if row is None:
            raise NotFound("api key", key_id)
        return api_key_from_row(row, self._d.codec)

    def find_page_session(self, tenant: str, session_id: str) -> StoredPageSession | None:
        row = self._run(
            f"SELECT {PAGE_SESSION_COLUMNS}, secret_sha256 FROM page_sessions "
            "WHERE tenant_id = ? AND id = ?",
            (tenant, session_id),
        ).fetchone()
        if row is None:
            return None
        codec = self._d.codec
        session = PageSession(
            row[0], row[1], row[2], row[3], codec.time(row[4]), codec.time(row[5]),
            codec.time(row[6]), codec.optional_time(row[7]),
        )  # fmt: skip
        return StoredPageSession(session, row[8])

    def insert_page_session(self, session: PageSession, secret_sha256: str) -> None:
        time = self._d.time
        self._run(
            f"INSERT INTO page_sessions ({PAGE_SESSION_COLUMNS}, secret_sha256) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session.id, session.tenant_id, session.user_id, session.kind,
             time(session.created_at), time(session.expires_at), time(session.last_seen_at),
             self._optional_time(session.ended_at), secret_sha256),
        )  # fmt: skip

    def end_page_session(self, tenant: str, session_id: str, at: datetime) -> bool:
        row = self._returned(
            "UPDATE page_sessions SET ended_at = ? "
            "WHERE tenant_id = ? AND id = ? AND ended_at IS NULL RETURNING id",
            (self._d.time(at), tenant, session_id),
        )
        return row is not None

    def touch_page_session(self, tenant: str, session_id: str, at: datetime) -> None:
        self._run(
            "UPDATE page_sessions SET last_seen_at = ? WHERE tenant_id = ? AND id = ?",
            (self._d.time(at), tenant, session_id),
        )

    def last_assembly(self, tenant: str, user: str, conversation_id: str) -> AssemblyRecord | None:
        return self._last_assembly_of(self._send_last_assembly(tenant, user, conversation_id))

    def _send_last_assembly(self, tenant: str, user: str, conversation_id: str) -> Cursor:
        """The read, sent (queued, where the backend pipelines): ``_last_assembly_of`` takes its
        answer."""
        return self._run(
            "SELECT conversation_id, leaf_id, at, report FROM last_assemblies "
            "WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?",
            (tenant, user, conversation_id),
        )

    def _last_assembly_of(self, sent: Cursor) -> AssemblyRecord | None:
        row = sent.fetchone()
        if row is None:
            return None
        codec = self._d.codec
        return AssemblyRecord(row[0], row[1], codec.time(row[2]), codec.json(row[3]))

    def put_last_assembly(self, tenant: str, user: str, record: AssemblyRecord) -> None:
        self._run(
            "INSERT INTO last_assemblies (tenant_id, conversation_id, user_id, leaf_id, at, "
            "report) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, conversation_id) DO UPDATE "
            "SET leaf_id = excluded.leaf_id, at = excluded.at, report = excluded.report",
            (tenant, record.conversation_id, user, record.leaf_id, self._d.time(record.at),
             self._d.json(record.report)),
        )  # fmt: skip
