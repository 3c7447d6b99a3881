"""PostgreSQL primitives for long-term memory, audit events, settings and a user's whole data.

Every read of a user's memories, pins or settings inside a write transaction first takes the
user's advisory lock (``TxnBase._lock_owner``): supersession (read the current record on a
subject, mark it superseded, insert the new one) and pin positions are read-modify-writes that
two processes must not interleave, and the lock makes the second wait for the first instead of
both winning.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.memory import AuditEvent, MemoryRecord
from convmem.model.policy import SensitiveRecall, TenantPolicy
from convmem.store.index_form import stored_index_form
from convmem.store.memories import MemoryUpdate, sensitive_clause
from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.fulltext import FORM_COLUMNS
from convmem.store.postgres.rows import export_value
from convmem.store.rows import DECODED, MEMORY_COLUMNS, MEMORY_WIDTH, memory_from_row


def memory_owner_lexeme(tenant: str, user: str) -> str:
    """The lexeme a user's memories carry in their tsvector (hex: no stemming, no stop word)."""
    return "m" + tenant.encode().hex() + "x" + user.encode().hex()


# (table, which rows are the user's) for every table an export holds (derived tables are left
# out; ``delete_user`` finds every table from the schema, ``convmem.store.lineage``).
_BY_USER = "tenant_id = %s AND user_id = %s"
_BY_CONVERSATION = (
    "tenant_id = %s AND conversation_id IN "
    "(SELECT id FROM conversations WHERE tenant_id = %s AND user_id = %s)"
)
_BY_MESSAGE = (
    "tenant_id = %s AND message_id IN "
    "(SELECT id FROM messages WHERE tenant_id = %s AND user_id = %s)"
)
USER_TABLES: tuple[tuple[str, str], ...] = (
    ("audit_events", _BY_USER),
    ("conversations", _BY_USER),
    ("entities", _BY_USER),
    ("entity_facts", _BY_USER),
    ("entity_name_sources", _BY_USER),
    ("entity_names", _BY_USER),
    ("jobs", _BY_CONVERSATION),
    ("last_assemblies", _BY_USER),
    ("memories", _BY_USER),
    ("memory_evidence", _BY_USER),
    ("message_blobs", _BY_MESSAGE),
    ("messages", _BY_USER),
    ("pinned_instructions", _BY_USER),
    ("summaries", _BY_USER),
    ("user_settings", _BY_USER),
)
# columns that are internal machinery, not the user's data
_NOT_EXPORTED = {"seq", "tsv", "owner_lexeme", *FORM_COLUMNS}


def _params(where: str, tenant: str, user: str) -> tuple[str, ...]:
    return (tenant, user) if where.count("%s") == 2 else (tenant, tenant, user)


class MemoryTxnMixin(CascadeTxnMixin):
    if TYPE_CHECKING:  # the lifecycle mixin's: the policy holds the tenant's memory switch

        def tenant_policy(self, tenant: str) -> TenantPolicy: ...

    # --- memories -------------------------------------------------------------------------------

    def insert_memory(self, tenant: str, admitted: Admitted[MemoryRecord]) -> None:
        record = admitted.value
        self._lock_owner(tenant, record.user_id)
        self._db.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}, owner_lexeme, text_form, subject_form) "
            f"VALUES ({', '.join(['%s'] * (MEMORY_WIDTH + 3))})",
            (
                record.id, tenant, record.user_id, record.scope, record.category,
                record.subject_key, record.text, record.source_kind, record.source_message_id,
                record.status, record.supersedes_id, record.conflicts_with_id,
                record.sensitivity, record.purpose, record.created_at, record.updated_at,
                record.expires_at, record.confidence, record.basis,
                memory_owner_lexeme(tenant, record.user_id),
                stored_index_form(record.text), stored_index_form(record.subject_key),
            ),
        )  # fmt: skip

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord:
        self._lock_owner(tenant, user)
        row = self._db.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories "
            "WHERE tenant_id = %s AND user_id = %s AND id = %s",
            (tenant, user, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound("memory", memory_id)
        return memory_from_row(row, DECODED)

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
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = %s AND user_id = %s"
        params: list[Any] = [tenant, user]
        if statuses is not None:
            sql += " AND status = ANY(%s)"
            params.append(list(statuses))
        if category is not None:
            sql += " AND category = %s"
            params.append(category)
        if scopes is not None:
            sql += " AND scope = ANY(%s)"
            params.append(list(scopes))
        if purposes is not None:
            sql += " AND purpose = ANY(%s)"
            params.append(list(purposes))
        if subject_key is not None:
            sql += " AND subject_key = %s"
            params.append(subject_key)
        if unexpired_at is not None:
            sql += " AND (expires_at IS NULL OR expires_at > %s)"
            params.append(unexpired_at)
        if unconflicted:
            sql += " AND conflicts_with_id IS NULL"
        clause, values = sensitive_clause(sensitive, "%s", table="")
        if clause:
            sql += " " + clause.rstrip()
            params.extend(values)
        sql += " ORDER BY updated_at DESC, id DESC" if newest_first else " ORDER BY created_at, id"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [memory_from_row(row, DECODED) for row in self._db.execute(sql, params).fetchall()]

    def set_memory_fields(self, tenant: str, memory_id: str, update: MemoryUpdate) -> None:
        fields = update.changes()  # column names fixed by MemoryUpdate, never caller text
        if update.erase_content:
            # the index form goes with the text it was derived from (the blank text needs none)
            fields |= {"text_form": None, "subject_form": None}
        assignments = ", ".join(f"{name} = %s" for name in fields)
        self._db.execute(
            f"UPDATE memories SET {assignments} WHERE tenant_id = %s AND id = %s",
            (*fields.values(), tenant, memory_id),
        )
        if update.erase_content:
            # what was derived from the old text goes with it (the tsvector, a generated column,
            # already followed the blanked text and forms; the vector goes)
            self._cascade().erase_text(tenant, "memory", [memory_id])

    def delete_memories(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        self._lock_owner(tenant, user)
        self._cascade().erase(tenant, "memory", self._owned(tenant, user, "memories", memory_ids))

    # --- audit ----------------------------------------------------------------------------------

    def insert_audit(self, tenant: str, event: AuditEvent) -> None:
        self._db.execute(
            "INSERT INTO audit_events (tenant_id, id, user_id, actor, action, object_kind, "
            "object_id, at, details) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (tenant, event.id, event.user_id, event.actor, event.action, event.object_kind,
             event.object_id, event.at, Jsonb(event.details)),
        )  # fmt: skip

    def list_audit(self, tenant: str, user: str) -> list[AuditEvent]:
        rows = self._db.execute(
            "SELECT id, user_id, actor, action, object_kind, object_id, at, details "
            "FROM audit_events WHERE tenant_id = %s AND user_id = %s ORDER BY at, id",
            (tenant, user),
        ).fetchall()
        return [AuditEvent(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]

    # --- settings -------------------------------------------------------------------------------

    def memory_enabled(self, tenant: str, user: str) -> bool:
        self._lock_owner(tenant, user)
        return self._snapshot_read(*self._memory_enabled_read(tenant, user))

    def _memory_enabled_read(
        self, tenant: str, user: str
    ) -> tuple[tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], bool]]:
        def send() -> psycopg.Cursor[Any]:
            return self._db.execute(
                "SELECT memory_enabled FROM user_settings WHERE tenant_id = %s AND user_id = %s",
                (tenant, user),
            )

        def decode(sent: psycopg.Cursor[Any]) -> bool:
            row = sent.fetchone()
            return True if row is None else bool(row[0])

        return ("memory_enabled", tenant, user), send, decode

    def set_memory_enabled(self, tenant: str, user: str, enabled: bool, at: datetime) -> None:
        self._lock_owner(tenant, user)
        self._db.execute(
            "INSERT INTO user_settings (tenant_id, user_id, memory_enabled, updated_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, user_id) DO UPDATE SET "
            "memory_enabled = EXCLUDED.memory_enabled, updated_at = EXCLUDED.updated_at",
            (tenant, user, enabled, at),
        )

    def tenant_memory_disabled(self, tenant: str) -> bool:
        return self.tenant_policy(tenant).memory_disabled

    # --- a user's whole data --------------------------------------------------------------------

    def tenant_users(self, tenant: str, after: str | None, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT DISTINCT user_id FROM conversations WHERE tenant_id = %s AND user_id > %s "
            "ORDER BY user_id LIMIT %s",
            (tenant, after or "", limit),
        ).fetchall()
        return [row[0] for row in rows]

    def export_user(self, tenant: str, user: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for table, where in USER_TABLES:
            cursor = self._db.execute(
                f"SELECT * FROM {table} WHERE {where}", _params(where, tenant, user)
            )
            rows = cursor.fetchall()  # first: in pipeline mode the description comes with them
            names = [d.name for d in cursor.description or ()]
            out[table] = [
                {
                    name: _exported(value)
                    for name, value in zip(names, row, strict=True)
                    if name not in _NOT_EXPORTED
                }
                for row in rows
            ]
        return out


def _exported(value: Any) -> Any:
    """JSON documents as the JSON text SQLite exports hold, the rest JSON-ready."""
    if isinstance(value, dict | list):
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return export_value(value)
