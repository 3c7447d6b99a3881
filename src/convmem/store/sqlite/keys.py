"""SQLite primitives for API keys and the last assembled request of each conversation."""

from __future__ import annotations

import json
from datetime import datetime

from convmem.errors import NotFound
from convmem.model.keys import ApiKey, AssemblyRecord
from convmem.model.page_sessions import PageSession
from convmem.store.keys import StoredKey, StoredPageSession
from convmem.store.rows import KEY_COLUMNS, api_key_from_row, key_purposes
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.sql import TEXT_CODEC

PAGE_SESSION_COLUMNS = (
    "id, tenant_id, acts_for_user, kind, created_at, expires_at, last_seen_at, ended_at"
)


class KeyTxnMixin:
    _db: Statements

    def find_api_key(self, key_id: str) -> StoredKey | None:
        row = self._db.execute(
            f"SELECT {KEY_COLUMNS}, secret_sha256 FROM api_keys WHERE id = ?", (key_id,)
        ).fetchone()
        return None if row is None else StoredKey(api_key_from_row(row, TEXT_CODEC), row[9])

    def list_api_keys(self, tenant: str) -> list[ApiKey]:
        rows = self._db.execute(
            f"SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY id", (tenant,)
        ).fetchall()
        return [api_key_from_row(row, TEXT_CODEC) for row in rows]

    def insert_api_key(self, tenant: str, key: ApiKey, secret_sha256: str) -> None:
        self._db.execute(
            f"INSERT INTO api_keys ({KEY_COLUMNS}, secret_sha256) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key.id,
                tenant,
                key.role,
                key.user_id,
                key.name,
                key.created_by,
                utc_text(key.created_at),
                utc_text(key.revoked_at) if key.revoked_at else None,
                key_purposes(key),
                secret_sha256,
            ),
        )

    def revoke_api_key(self, tenant: str, key_id: str, at: datetime) -> ApiKey:
        self._db.execute(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) "
            "WHERE tenant_id = ? AND id = ?",
            (utc_text(at), tenant, key_id),
        )
        row = self._db.execute(
            f"SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? AND id = ?",
            (tenant, key_id),
        ).fetchone()
        if row is None:
            raise NotFound("api key", key_id)
        return api_key_from_row(row, TEXT_CODEC)

    def find_page_session(self, tenant: str, session_id: str) -> StoredPageSession | None:
        row = self._db.execute(
            f"SELECT {PAGE_SESSION_COLUMNS}, secret_sha256 FROM page_sessions "
            "WHERE tenant_id = ? AND id = ?",
            (tenant, session_id),
        ).fetchone()
        if row is None:
            return None
        parse = datetime.fromisoformat
        times = [parse(v) if v is not None else None for v in row[4:8]]
        session = PageSession(row[0], row[1], row[2], row[3], *times)  # type: ignore[arg-type]
        return StoredPageSession(session, row[8])

    def insert_page_session(self, session: PageSession, secret_sha256: str) -> None:
        self._db.execute(
            f"INSERT INTO page_sessions ({PAGE_SESSION_COLUMNS}, secret_sha256) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session.id, session.tenant_id, session.user_id, session.kind,
             utc_text(session.created_at), utc_text(session.expires_at),
             utc_text(session.last_seen_at),
             utc_text(session.ended_at) if session.ended_at else None, secret_sha256),
        )  # fmt: skip

    def end_page_session(self, tenant: str, session_id: str, at: datetime) -> bool:
        ended = self._db.execute(
            "UPDATE page_sessions SET ended_at = ? "
            "WHERE tenant_id = ? AND id = ? AND ended_at IS NULL",
            (utc_text(at), tenant, session_id),
        )
        return ended.rowcount == 1

    def touch_page_session(self, tenant: str, session_id: str, at: datetime) -> None:
        self._db.execute(
            "UPDATE page_sessions SET last_seen_at = ? WHERE tenant_id = ? AND id = ?",
            (utc_text(at), tenant, session_id),
        )

    def last_assembly(self, tenant: str, user: str, conversation_id: str) -> AssemblyRecord | None:
        row = self._db.execute(
            "SELECT conversation_id, leaf_id, at, report FROM last_assemblies "
            "WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?",
            (tenant, user, conversation_id),
        ).fetchone()
        if row is None:
            return None
        return AssemblyRecord(row[0], row[1], datetime.fromisoformat(row[2]), json.loads(row[3]))

    def put_last_assembly(self, tenant: str, user: str, record: AssemblyRecord) -> None:
        self._db.execute(
            "INSERT INTO last_assemblies (tenant_id, conversation_id, user_id, leaf_id, at, "
            "report) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, conversation_id) DO UPDATE "
            "SET leaf_id = excluded.leaf_id, at = excluded.at, report = excluded.report",
            (
                tenant,
                record.conversation_id,
                user,
                record.leaf_id,
                utc_text(record.at),
                json.dumps(record.report),
            ),
        )
