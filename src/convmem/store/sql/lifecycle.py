"""Tenant policy, the retention sweeps and proposals' evidence, for both SQL backends (mixed into
the backend's transaction; the index rows' sweep is the backend's, as its index is)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

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
from convmem.store.rows import MESSAGE_COLUMNS, message_from_row
from convmem.store.sql.txn import Cursor, SnapshotRead, SqlTxn


class LifecycleTxnMixin(SqlTxn):
    # --- tenant policy --------------------------------------------------------------------------

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        return self._snapshot_read(*self._tenant_policy_read(tenant))

    def _tenant_policy_read(self, tenant: str) -> SnapshotRead[TenantPolicy]:
        def send() -> Cursor:
            return self._run(
                f"SELECT {POLICY_COLUMNS} FROM tenant_policies WHERE tenant_id = ?", (tenant,)
            )

        def decode(sent: Cursor) -> TenantPolicy:
            row = sent.fetchone()
            return policy_from_row(row) if row else TenantPolicy(tenant)

        return ("tenant_policy", tenant), send, decode

    def tenant_policies(self) -> list[TenantPolicy]:
        rows = self._run(
            f"SELECT {POLICY_COLUMNS} FROM tenant_policies WHERE {ANY_PERIOD} ORDER BY tenant_id"
        ).fetchall()
        return [policy_from_row(row) for row in rows]

    def set_tenant_policy(self, policy: TenantPolicy, at: datetime) -> None:
        updates = ", ".join(f"{c} = excluded.{c}" for c in (*POLICY_UPDATED, "updated_at"))
        marks = ", ".join(["?"] * (len(POLICY_UPDATED) + 2))
        self._run(
            f"INSERT INTO tenant_policies ({POLICY_COLUMNS}, updated_at) VALUES ({marks}) "
            f"ON CONFLICT (tenant_id) DO UPDATE SET {updates}",
            (policy.tenant_id, self._d.flag(policy.memory_disabled), *policy_values(policy),
             self._d.time(at)),
        )  # fmt: skip

    # --- consolidation's reads -----------------------------------------------------------------

    def recent_writers(self, after_id: str, limit: int) -> list[WriterRef]:
        rows = self._run(
            "SELECT tenant_id, user_id, MAX(id) FROM (SELECT tenant_id, user_id, id FROM messages "
            "WHERE id > ? AND role = 'user' ORDER BY id LIMIT ?) AS turns "
            "GROUP BY tenant_id, user_id ORDER BY MAX(id)",
            (after_id, limit),
        ).fetchall()
        return [WriterRef(row[0], row[1], row[2]) for row in rows]

    def user_turns_after(self, tenant: str, user: str, after_id: str, limit: int) -> list[Message]:
        rows = self._run(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m JOIN conversations c "
            "ON c.tenant_id = m.tenant_id AND c.id = m.conversation_id "
            "WHERE m.tenant_id = ? AND c.tenant_id = ? AND m.user_id = ? "
            "AND m.role = 'user' AND c.temporary = FALSE AND m.id > ? "
            "ORDER BY m.id LIMIT ?",
            (tenant, tenant, user, after_id, limit),
        ).fetchall()
        return [message_from_row(row, self._d.codec) for row in rows]

    # --- sweeps ---------------------------------------------------------------------------------

    def memories_untouched_before(
        self, tenant: str, id_cutoff: str, updated_before: datetime, limit: int,
        status: str | None = None,
    ) -> list[MemoryRef]:  # fmt: skip
        only = "" if status is None else "AND status = ? "
        rows = self._run(
            "SELECT user_id, id FROM memories WHERE tenant_id = ? AND id < ? "
            f"AND updated_at < ? {only}ORDER BY id LIMIT ?",
            (tenant, id_cutoff, self._d.time(updated_before),
             *(() if status is None else (status,)), limit),
        ).fetchall()  # fmt: skip
        return [MemoryRef(row[0], row[1]) for row in rows]

    def delete_summaries_before(self, tenant: str, before: datetime, limit: int) -> int:
        return self._changed(
            self._run(
                "DELETE FROM summaries WHERE tenant_id = ? AND id IN (SELECT id FROM summaries "
                "WHERE tenant_id = ? AND created_at < ? ORDER BY created_at LIMIT ?)",
                (tenant, tenant, self._d.iso(before.astimezone(UTC)), limit),
            )
        )

    def delete_audit_before(self, tenant: str, before: datetime, limit: int) -> int:
        return self._changed(
            self._run(
                "DELETE FROM audit_events WHERE tenant_id = ? AND id IN (SELECT id FROM "
                "audit_events WHERE tenant_id = ? AND at < ? ORDER BY at LIMIT ?)",
                (tenant, tenant, self._d.time(before), limit),
            )
        )

    # --- evidence -------------------------------------------------------------------------------

    def memory_evidence(
        self, tenant: str, user: str, memory_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        rows = self._run(
            "SELECT memory_id, message_id FROM memory_evidence WHERE tenant_id = ? "
            f"AND user_id = ? AND memory_id {self._d.one_of} ORDER BY added_at, message_id",
            (tenant, user, self._d.ids(memory_ids)),
        ).fetchall()
        found: dict[str, list[str]] = {}
        for memory_id, message_id in rows:
            found.setdefault(memory_id, []).append(message_id)
        return found

    def evidenced_messages(self, tenant: str, user: str, message_ids: Sequence[str]) -> set[str]:
        rows = self._run(
            "SELECT DISTINCT message_id FROM memory_evidence WHERE tenant_id = ? "
            f"AND user_id = ? AND message_id {self._d.one_of}",
            (tenant, user, self._d.ids(message_ids)),
        ).fetchall()
        return {row[0] for row in rows}

    def add_memory_evidence(
        self, tenant: str, user: str, memory_id: str, message_ids: Sequence[str]
    ) -> None:
        self._lock_owner(tenant, user)
        at = self._d.time(datetime.now(UTC))
        self._run_many(
            "INSERT INTO memory_evidence (tenant_id, user_id, memory_id, message_id, added_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(tenant, user, memory_id, message_id, at) for message_id in message_ids],
        )
