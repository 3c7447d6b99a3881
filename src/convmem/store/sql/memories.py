"""Long-term memory, audit events, a user's settings and a user's whole data, for both SQL
backends (mixed into the backend's transaction).

Every read of a user's memories or settings inside a write first takes the user's lock
(``SqlTxn._lock_owner``, where the backend has one): supersession (read the current record on a
subject, mark it superseded, insert the new one) is a read-modify-write that two writers must not
interleave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.memory import AuditEvent, MemoryRecord
from convmem.model.policy import SensitiveRecall, TenantPolicy
from convmem.store.index_form import stored_index_form
from convmem.store.memories import MemoryUpdate, sensitive_clause
from convmem.store.rows import MEMORY_COLUMNS, memory_from_row
from convmem.store.sql.txn import Cursor, SnapshotRead, SqlTxn

# Tables derived from a user's data and rebuildable from it (search text, neighbour context,
# vocabularies, embeddings): deleted with the user, left out of exports.
DERIVED_TABLES = frozenset(
    {"message_index", "conversation_terms", "memory_vectors", "search_generations"}
)
# which rows of a table are the user's, by the column that says so
_BY_USER = "tenant_id = ? AND user_id = ?"
_BY_CONVERSATION = (
    "tenant_id = ? AND conversation_id IN "
    "(SELECT id FROM conversations WHERE tenant_id = ? AND user_id = ?)"
)
_BY_MESSAGE = (
    "tenant_id = ? AND message_id IN (SELECT id FROM messages WHERE tenant_id = ? AND user_id = ?)"
)


class MemoryRows(SqlTxn):
    # columns of the backend's that are its index's machinery, not the user's data
    _NOT_EXPORTED: ClassVar[frozenset[str]] = frozenset()

    if TYPE_CHECKING:  # the lifecycle mixin's: the policy holds the tenant's memory switch

        def tenant_policy(self, tenant: str) -> TenantPolicy: ...

        def _schema(self) -> dict[str, frozenset[str]]: ...  # the cascade mixin's

    def _memory_index_columns(self, tenant: str, user: str) -> Mapping[str, Any]:
        """Columns beside a memory's own that the backend's full-text index keeps."""
        return {}

    def _exported(self, value: Any) -> Any:
        """A column value as an export holds it (JSON-ready)."""
        return value

    # --- memories -------------------------------------------------------------------------------

    def insert_memory(self, tenant: str, admitted: Admitted[MemoryRecord]) -> None:
        record, d = admitted.value, self._d
        self._lock_owner(tenant, record.user_id)
        extra = {
            **self._memory_index_columns(tenant, record.user_id),
            "text_form": stored_index_form(record.text),
            "subject_form": stored_index_form(record.subject_key),
        }
        values = (
            record.id, tenant, record.user_id, record.scope, record.category,
            record.subject_key, record.text, record.source_kind, record.source_message_id,
            record.status, record.supersedes_id, record.conflicts_with_id, record.sensitivity,
            record.purpose, d.time(record.created_at), d.time(record.updated_at),
            None if record.expires_at is None else d.time(record.expires_at), record.confidence,
            record.basis, *extra.values(),
        )  # fmt: skip
        self._run(
            f"INSERT INTO memories ({MEMORY_COLUMNS}, {', '.join(extra)}) "
            f"VALUES ({', '.join(['?'] * len(values))})",
            values,
        )

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        self._lock_owner(tenant, user)
        row = self._run(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = ? AND user_id = ? AND id = ?",
            (tenant, user, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound("memory", memory_id)
        return memory_from_row(row, self._d.codec)

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
        self._lock_owner(tenant, user)
        d = self._d
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = ? AND user_id = ?"
        params: list[Any] = [tenant, user]
        for column, wanted in (("status", statuses), ("scope", scopes), ("purpose", purposes)):
            if wanted is not None:
                sql += f" AND {column} {d.one_of}"
                params.append(d.ids(wanted))
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        if subject_key is not None:
            sql += " AND subject_key = ?"
            params.append(subject_key)
        if unexpired_at is not None:
            sql += " AND (expires_at IS NULL OR expires_at > ?)"
            params.append(d.time(unexpired_at))
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
        return [memory_from_row(row, d.codec) for row in self._run(sql, params).fetchall()]

    def set_memory_fields(self, tenant: str, memory_id: str, update: MemoryUpdate) -> None:
        fields = update.changes()  # column names fixed by MemoryUpdate, never caller text
        if update.erase_content:
            # the index forms go with the texts they were derived from (a blank text needs none)
            fields = {**fields, "text_form": None, "subject_form": None}
        values = [self._d.time(v) if isinstance(v, datetime) else v for v in fields.values()]
        assignments = ", ".join(f"{name} = ?" for name in fields)
        self._run(
            f"UPDATE memories SET {assignments} WHERE tenant_id = ? AND id = ?",
            (*values, tenant, memory_id),
        )
        if update.erase_content:
            # what was derived from the old text goes with it (a rejected proposal's vector)
            self._cascade().erase_text(tenant, "memory", [memory_id])

    def delete_memories(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        self._lock_owner(tenant, user)
        self._cascade().erase(tenant, "memory", self._owned(tenant, user, "memories", memory_ids))

    # --- audit ----------------------------------------------------------------------------------

    def insert_audit(self, tenant: str, event: AuditEvent) -> None:
        self._run(
            "INSERT INTO audit_events (tenant_id, id, user_id, actor, action, object_kind, "
            "object_id, at, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tenant, event.id, event.user_id, event.actor, event.action, event.object_kind,
             event.object_id, self._d.time(event.at), self._d.json(event.details)),
        )  # fmt: skip

    def list_audit(self, tenant: str, user: str) -> list[AuditEvent]:
        rows = self._run(
            "SELECT id, user_id, actor, action, object_kind, object_id, at, details "
            "FROM audit_events WHERE tenant_id = ? AND user_id = ? ORDER BY at, id",
            (tenant, user),
        ).fetchall()
        codec = self._d.codec
        return [
            AuditEvent(r[0], r[1], r[2], r[3], r[4], r[5], codec.time(r[6]), codec.json(r[7]))
            for r in rows
        ]

    # --- settings -------------------------------------------------------------------------------

    def memory_enabled(self, tenant: str, user: str) -> bool:
        self._lock_owner(tenant, user)
        return self._snapshot_read(*self._memory_enabled_read(tenant, user))

    def _memory_enabled_read(self, tenant: str, user: str) -> SnapshotRead[bool]:
        def send() -> Cursor:
            return self._run(
                "SELECT memory_enabled FROM user_settings WHERE tenant_id = ? AND user_id = ?",
                (tenant, user),
            )

        def decode(sent: Cursor) -> bool:
            row = sent.fetchone()
            return True if row is None else bool(row[0])

        return ("memory_enabled", tenant, user), send, decode

    def set_memory_enabled(self, tenant: str, user: str, enabled: bool, at: datetime) -> None:
        self._lock_owner(tenant, user)
        self._run(
            "INSERT INTO user_settings (tenant_id, user_id, memory_enabled, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id) DO UPDATE SET "
            "memory_enabled = excluded.memory_enabled, updated_at = excluded.updated_at",
            (tenant, user, self._d.flag(enabled), self._d.time(at)),
        )

    def tenant_memory_disabled(self, tenant: str) -> bool:
        return self.tenant_policy(tenant).memory_disabled

    # --- a user's whole data --------------------------------------------------------------------

    def tenant_users(self, tenant: str, after: str | None, limit: int) -> list[str]:
        rows = self._run(
            "SELECT DISTINCT user_id FROM conversations WHERE tenant_id = ? AND user_id > ? "
            "ORDER BY user_id LIMIT ?",
            (tenant, after or "", limit),
        ).fetchall()
        return [row[0] for row in rows]

    def _user_tables(self) -> list[tuple[str, str]]:
        """(table, which rows are the user's) for every table holding per-user data, found
        from the schema so tables added by later migrations are included; the derived ones
        and the backend's own machinery (``_``-prefixed, full-text) are left out."""
        found: list[tuple[str, str]] = []
        for table, columns in sorted(self._schema().items()):
            if table in DERIVED_TABLES or table.startswith("_") or "_fts" in table:
                continue
            if "tenant_id" not in columns:
                continue
            for column, where in (
                ("user_id", _BY_USER),
                ("conversation_id", _BY_CONVERSATION),
                ("message_id", _BY_MESSAGE),
            ):
                if column in columns:
                    found.append((table, where))
                    break
        return found

    def export_user(self, tenant: str, user: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for table, where in self._user_tables():
            params = (tenant, user) if where.count("?") == 2 else (tenant, tenant, user)
            cursor: Any = self._run(f"SELECT * FROM {table} WHERE {where}", params)
            rows = cursor.fetchall()  # first: in pipeline mode the description comes with them
            names = [column[0] for column in cursor.description or ()]
            out[table] = [
                {
                    name: self._exported(value)
                    for name, value in zip(names, row, strict=True)
                    if name not in self._NOT_EXPORTED
                }
                for row in rows
            ]
        return out
