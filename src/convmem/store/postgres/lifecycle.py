"""PostgreSQL rows for tenant policy, the retention sweeps and proposals' evidence (mixed into
``PostgresTxn``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg

from convmem.model.messages import Message
from convmem.model.policy import TenantPolicy
from convmem.store.lifecycle import (
    ANY_PERIOD,
    POLICY_COLUMNS,
    POLICY_UPDATED,
    MemoryRef,
    WriterRef,
    policy_from_row,
    policy_values,
)
from convmem.store.postgres.rows import TxnBase
from convmem.store.rows import DECODED, MESSAGE_COLUMNS, message_from_row


class LifecycleTxnMixin(TxnBase):
    if TYPE_CHECKING:  # the search mixin's: index rows go and their search generations move

        def forget_indexed(self, tenant: str, message_ids: Sequence[str]) -> None: ...

    # --- tenant policy --------------------------------------------------------------------------

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        return self._snapshot_read(*self._tenant_policy_read(tenant))

    def _tenant_policy_read(
        self, tenant: str
    ) -> tuple[tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], TenantPolicy]]:
        def send() -> psycopg.Cursor[Any]:
            return self._db.execute(
                f"SELECT {POLICY_COLUMNS} FROM tenant_policies WHERE tenant_id = %s", (tenant,)
            )

        def decode(sent: psycopg.Cursor[Any]) -> TenantPolicy:
            row = sent.fetchone()
            return policy_from_row(row) if row else TenantPolicy(tenant)

        return ("tenant_policy", tenant), send, decode

    def tenant_policies(self) -> list[TenantPolicy]:
        rows = self._db.execute(
            f"SELECT {POLICY_COLUMNS} FROM tenant_policies WHERE {ANY_PERIOD} ORDER BY tenant_id"
        ).fetchall()
        return [policy_from_row(row) for row in rows]

    def set_tenant_policy(self, policy: TenantPolicy, at: datetime) -> None:
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in (*POLICY_UPDATED, "updated_at"))
        marks = ", ".join(["%s"] * (len(POLICY_UPDATED) + 2))
        self._db.execute(
            f"INSERT INTO tenant_policies ({POLICY_COLUMNS}, updated_at) VALUES ({marks}) "
            f"ON CONFLICT (tenant_id) DO UPDATE SET {updates}",
            (policy.tenant_id, policy.memory_disabled, *policy_values(policy), at),
        )

    # --- consolidation's reads -----------------------------------------------------------------

    def recent_writers(self, after_id: str, limit: int) -> list[WriterRef]:
        rows = self._db.execute(
            "SELECT tenant_id, user_id, MAX(id) FROM (SELECT tenant_id, user_id, id FROM messages "
            "WHERE id > %s AND role = 'user' ORDER BY id LIMIT %s) AS turns "
            "GROUP BY tenant_id, user_id ORDER BY MAX(id)",
            (after_id, limit),
        ).fetchall()
        return [WriterRef(row[0], row[1], row[2]) for row in rows]

    def user_turns_after(self, tenant: str, user: str, after_id: str, limit: int) -> list[Message]:
        rows = self._db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m JOIN conversations c "
            "ON c.tenant_id = m.tenant_id AND c.id = m.conversation_id "
            "WHERE m.tenant_id = %s AND c.tenant_id = %s AND m.user_id = %s "
            "AND m.role = 'user' AND c.temporary = FALSE AND m.id > %s "
            "ORDER BY m.id LIMIT %s",
            (tenant, tenant, user, after_id, limit),
        ).fetchall()
        return [message_from_row(row, DECODED) for row in rows]

    # --- sweeps ---------------------------------------------------------------------------------

    def memories_untouched_before(
        self, tenant: str, id_cutoff: str, updated_before: datetime, limit: int,
        status: str | None = None,
    ) -> list[MemoryRef]:  # fmt: skip
        only = "" if status is None else "AND status = %s "
        rows = self._db.execute(
            "SELECT user_id, id FROM memories WHERE tenant_id = %s AND id < %s "
            f"AND updated_at < %s {only}ORDER BY id LIMIT %s",
            (tenant, id_cutoff, updated_before, *(() if status is None else (status,)), limit),
        ).fetchall()
        return [MemoryRef(row[0], row[1]) for row in rows]

    def delete_summaries_before(self, tenant: str, before: datetime, limit: int) -> int:
        return self._changed(
            self._db.execute(
                "DELETE FROM summaries WHERE tenant_id = %s AND id IN (SELECT id FROM summaries "
                "WHERE tenant_id = %s AND created_at < %s ORDER BY created_at LIMIT %s)",
                (tenant, tenant, before.astimezone(UTC), limit),
            )
        )

    def delete_audit_before(self, tenant: str, before: datetime, limit: int) -> int:
        return self._changed(
            self._db.execute(
                "DELETE FROM audit_events WHERE tenant_id = %s AND id IN (SELECT id FROM "
                "audit_events WHERE tenant_id = %s AND at < %s ORDER BY at LIMIT %s)",
                (tenant, tenant, before.astimezone(UTC), limit),
            )
        )

    def delete_index_rows_before(self, tenant: str, message_cutoff: str, limit: int) -> int:
        rows = self._db.execute(
            "SELECT message_id FROM message_index WHERE tenant_id = %s AND message_id < %s "
            "ORDER BY message_id LIMIT %s",
            (tenant, message_cutoff, limit),
        ).fetchall()
        if rows:
            self.forget_indexed(tenant, [row[0] for row in rows])
        return len(rows)

    # --- evidence -------------------------------------------------------------------------------

    def memory_evidence(
        self, tenant: str, user: str, memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        rows = self._db.execute(
            "SELECT memory_id, message_id FROM memory_evidence WHERE tenant_id = %s "
            "AND user_id = %s AND memory_id = ANY(%s) ORDER BY added_at, message_id",
            (tenant, user, list(memory_ids)),
        ).fetchall()
        found: dict[str, list[str]] = {}
        for memory_id, message_id in rows:
            found.setdefault(memory_id, []).append(message_id)
        return found

    def evidenced_messages(self, tenant: str, user: str, message_ids: Sequence[str]) -> set[str]:
        rows = self._db.execute(
            "SELECT DISTINCT message_id FROM memory_evidence WHERE tenant_id = %s "
            "AND user_id = %s AND message_id = ANY(%s)",
            (tenant, user, list(message_ids)),
        ).fetchall()
        return {row[0] for row in rows}

    def add_memory_evidence(
        self, tenant: str, user: str, memory_id: str, message_ids: Sequence[str]
    ) -> None:
        self._lock_owner(tenant, user)
        at = datetime.now(UTC)
        for message_id in message_ids:
            self._db.execute(
                "INSERT INTO memory_evidence (tenant_id, user_id, memory_id, message_id, "
                "added_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant, user, memory_id, message_id, at),
            )
