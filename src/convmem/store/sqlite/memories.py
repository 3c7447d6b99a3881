"""SQLite primitives for long-term memory, audit events, settings and a user's whole data."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.memory import AuditEvent, MemoryRecord
from convmem.model.policy import SensitiveRecall
from convmem.store.index_form import stored_index_form
from convmem.store.lineage import Cascade
from convmem.store.memories import MemoryUpdate, sensitive_clause
from convmem.store.rows import MEMORY_COLUMNS, MEMORY_WIDTH, export_bytes, memory_from_row
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.sql import TEXT_CODEC


def utc_text(value: datetime) -> str:
    """One text form for every stored time, so SQL compares them in order."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


# Tables derived from a user's data and rebuildable from it (search text, neighbour context,
# vocabularies, embeddings): deleted with the user, left out of exports.
DERIVED_TABLES = frozenset(
    {"message_index", "conversation_terms", "memory_vectors", "search_generations"}
)


# the index forms beside a memory's texts are derived, for its full-text index alone
_NOT_EXPORTED = frozenset({"text_form", "subject_form"})


class MemoryTxnMixin:
    _db: Statements

    if TYPE_CHECKING:  # the cascade mixin's (convmem.store.lineage)

        def _cascade(self) -> Cascade: ...

        def _owned(self, tenant: str, user: str, table: str, ids: Sequence[str]) -> list[str]: ...

    # --- memories -------------------------------------------------------------------------------

    def insert_memory(self, tenant: str, admitted: Admitted[MemoryRecord]) -> None:
        record = admitted.value
        self._db.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}, text_form, subject_form) "
            f"VALUES ({', '.join(['?'] * (MEMORY_WIDTH + 2))})",
            (
                record.id, tenant, record.user_id, record.scope, record.category,
                record.subject_key, record.text, record.source_kind, record.source_message_id,
                record.status, record.supersedes_id, record.conflicts_with_id,
                record.sensitivity, record.purpose, utc_text(record.created_at),
                utc_text(record.updated_at),
                utc_text(record.expires_at) if record.expires_at else None,
                record.confidence, record.basis,
                stored_index_form(record.text), stored_index_form(record.subject_key),
            ),
        )  # fmt: skip

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        row = self._db.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = ? AND user_id = ? AND id = ?",
            (tenant, user, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound("memory", memory_id)
        return memory_from_row(row, TEXT_CODEC)

    def list_memories(
        self,
        tenant: str,
        user: str,
        *,
        statuses: Sequence[str] | None = None,
        category: str | None = None,
        scopes: Sequence[str] | None = None,
        purposes: Sequence[str] | None = None,
        subject_key: str | None = None,
        unexpired_at: datetime | None = None,
        unconflicted: bool = False,
        newest_first: bool = False,
        limit: int | None = None,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryRecord]:
        """Oldest first, or most recently updated first."""
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = ? AND user_id = ?"
        params: list[Any] = [tenant, user]
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' * len(statuses))})"
            params.extend(statuses)
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        if scopes is not None:
            sql += f" AND scope IN ({', '.join('?' * len(scopes))})"
            params.extend(scopes)
        if purposes is not None:
            sql += f" AND purpose IN ({', '.join('?' * len(purposes))})"
            params.extend(purposes)
        if subject_key is not None:
            sql += " AND subject_key = ?"
            params.append(subject_key)
        if unexpired_at is not None:
            sql += " AND (expires_at IS NULL OR expires_at > ?)"
            params.append(utc_text(unexpired_at))
        if unconflicted:
            sql += " AND conflicts_with_id IS NULL"
        clause, values = sensitive_clause(sensitive, "?", table="")
        if clause:
            sql += " " + clause.rstrip()
            params.extend(values)
        sql += " ORDER BY updated_at DESC, id DESC" if newest_first else " ORDER BY created_at, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [
            memory_from_row(row, TEXT_CODEC) for row in self._db.execute(sql, params).fetchall()
        ]

    def set_memory_fields(self, tenant: str, memory_id: str, update: MemoryUpdate) -> None:
        fields = update.changes()  # column names fixed by MemoryUpdate, never caller text
        if update.erase_content:  # their index forms go with the texts
            fields = {**fields, "text_form": None, "subject_form": None}
        values = [utc_text(v) if isinstance(v, datetime) else v for v in fields.values()]
        assignments = ", ".join(f"{name} = ?" for name in fields)
        self._db.execute(
            f"UPDATE memories SET {assignments} WHERE tenant_id = ? AND id = ?",
            (*values, tenant, memory_id),
        )
        if update.erase_content:
            # what was derived from the old text goes with it (a rejected proposal's vector)
            self._cascade().erase_text(tenant, "memory", [memory_id])

    def delete_memories(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        owned = self._owned(tenant, user, "memories", memory_ids)
        self._cascade().erase(tenant, "memory", owned)

    # --- audit ----------------------------------------------------------------------------------

    def insert_audit(self, tenant: str, event: AuditEvent) -> None:
        self._db.execute(
            "INSERT INTO audit_events (tenant_id, id, user_id, actor, action, object_kind, "
            "object_id, at, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tenant, event.id, event.user_id, event.actor, event.action, event.object_kind,
             event.object_id, utc_text(event.at), json.dumps(event.details)),
        )  # fmt: skip

    def list_audit(self, tenant: str, user: str) -> list[AuditEvent]:
        rows = self._db.execute(
            "SELECT id, user_id, actor, action, object_kind, object_id, at, details "
            "FROM audit_events WHERE tenant_id = ? AND user_id = ? ORDER BY at, id",
            (tenant, user),
        ).fetchall()
        return [
            AuditEvent(r[0], r[1], r[2], r[3], r[4], r[5], datetime.fromisoformat(r[6]),
                       json.loads(r[7]))
            for r in rows
        ]  # fmt: skip

    # --- settings -------------------------------------------------------------------------------

    def memory_enabled(self, tenant: str, user: str) -> bool:
        row = self._db.execute(
            "SELECT memory_enabled FROM user_settings WHERE tenant_id = ? AND user_id = ?",
            (tenant, user),
        ).fetchone()
        return True if row is None else bool(row[0])

    def set_memory_enabled(self, tenant: str, user: str, enabled: bool, at: datetime) -> None:
        self._db.execute(
            "INSERT INTO user_settings (tenant_id, user_id, memory_enabled, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id) DO UPDATE SET "
            "memory_enabled = excluded.memory_enabled, updated_at = excluded.updated_at",
            (tenant, user, int(enabled), utc_text(at)),
        )

    def tenant_memory_disabled(self, tenant: str) -> bool:
        row = self._db.execute(
            "SELECT memory_disabled FROM tenant_policies WHERE tenant_id = ?", (tenant,)
        ).fetchone()
        return bool(row[0]) if row else False

    # --- a user's whole data --------------------------------------------------------------------

    def _user_tables(self) -> list[tuple[str, str]]:
        """(table, how to select the user's rows) for every table holding per-user data,
        found from the schema so tables added by later migrations are included."""
        found: list[tuple[str, str]] = []
        tables = [r[0] for r in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%_fts%' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name"
        )]  # fmt: skip
        for table in tables:
            columns = {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if "tenant_id" not in columns:
                continue
            if "user_id" in columns:
                found.append((table, "tenant_id = ? AND user_id = ?"))
            elif "conversation_id" in columns:
                found.append(
                    (
                        table,
                        "tenant_id = ? AND conversation_id IN (SELECT id FROM "
                        "conversations WHERE tenant_id = ? AND user_id = ?)",
                    )
                )
            elif "message_id" in columns:
                found.append(
                    (
                        table,
                        "tenant_id = ? AND message_id IN (SELECT id FROM messages "
                        "WHERE tenant_id = ? AND user_id = ?)",
                    )
                )
        return found  # fmt: skip

    @staticmethod
    def _params(where: str, tenant: str, user: str) -> tuple[str, ...]:
        return (tenant, user) if where.count("?") == 2 else (tenant, tenant, user)

    def tenant_users(self, tenant: str, after: str | None, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT DISTINCT user_id FROM conversations WHERE tenant_id = ? AND user_id > ? "
            "ORDER BY user_id LIMIT ?",
            (tenant, after or "", limit),
        ).fetchall()
        return [row[0] for row in rows]

    def export_user(self, tenant: str, user: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for table, where in self._user_tables():
            if table in DERIVED_TABLES:
                continue
            cursor = self._db.execute(
                f"SELECT * FROM {table} WHERE {where}", self._params(where, tenant, user)
            )
            names = [d[0] for d in cursor.description]
            out[table] = [
                {
                    name: export_bytes(value)
                    for name, value in zip(names, row, strict=True)
                    if name not in _NOT_EXPORTED
                }
                for row in cursor.fetchall()
            ]
        return out
