"""Conversations, their message trees and pinned instructions, for both SQL backends (mixed into
the backend's transaction). What a backend reads its own way stays with it: PostgreSQL locks the
conversation it reads in a write and queues a request's reads together; each stores a message's
token counts its own way (``insert_messages``)."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.conversation import ConversationRecord
from convmem.model.messages import Message
from convmem.store.conversations import BranchRow, PinnedInstruction, pin_origin
from convmem.store.rows import (
    CONVERSATION_COLUMNS,
    MESSAGE_COLUMNS,
    MESSAGE_WIDTH,
    conversation_from_row,
    message_from_row,
)
from convmem.store.sql.txn import SqlTxn


class ConversationRows(SqlTxn):
    # --- reads ----------------------------------------------------------------------------------

    def get_conversation(self, tenant: str, user: str, conversation_id: str) -> ConversationRecord:
        row = self._run(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations "
            "WHERE tenant_id = ? AND id = ? AND user_id = ?",
            (tenant, conversation_id, user),
        ).fetchone()
        if row is None:
            raise NotFound("conversation", conversation_id)
        return conversation_from_row(row, self._d.codec)

    def list_conversations(
        self, tenant: str, user: str, *, limit: int, offset: int
    ) -> list[ConversationRecord]:
        rows = self._run(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations "
            "WHERE tenant_id = ? AND user_id = ? ORDER BY id DESC LIMIT ? OFFSET ?",
            (tenant, user, limit, offset),
        ).fetchall()
        return [conversation_from_row(row, self._d.codec) for row in rows]

    def get_branch_row(self, tenant: str, user: str, message_id: str) -> BranchRow:
        row = self._run(
            f"SELECT {MESSAGE_COLUMNS}, m.estimate_tokens, m.estimate_before FROM messages m "
            "WHERE m.tenant_id = ? AND m.id = ? AND m.user_id = ?",
            (tenant, message_id, user),
        ).fetchone()
        if row is None:
            raise NotFound("message", message_id)
        estimate, before = row[MESSAGE_WIDTH:]
        return BranchRow(message_from_row(row, self._d.codec), None, estimate, before)

    def get_message(self, tenant: str, user: str, message_id: str) -> Message:
        return self.get_branch_row(tenant, user, message_id).message

    def read_recall_ahead(self, tenant: str, user: str, conversation_id: str) -> None:
        """Nothing here: a statement runs when it is sent (PostgreSQL queues the reads)."""

    def get_messages(
        self, tenant: str, user: str, message_ids: Sequence[str]
    ) -> dict[str, Message]:
        rows = self._run(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.tenant_id = ? AND m.user_id = ? "
            f"AND m.id {self._d.one_of}",
            (tenant, user, self._d.ids(message_ids)),
        ).fetchall()
        messages = (message_from_row(row, self._d.codec) for row in rows)
        return {message.id: message for message in messages}

    def message_blobs(self, tenant: str, message_ids: Sequence[str]) -> dict[str, bytes]:
        rows = self._run(
            f"SELECT sha256, data FROM message_blobs WHERE tenant_id = ? "
            f"AND message_id {self._d.one_of}",
            (tenant, self._d.ids(message_ids)),
        ).fetchall()
        return {row[0]: bytes(row[1]) for row in rows}

    def children(self, tenant: str, conversation_id: str, parent_id: str | None) -> list[Message]:
        parent = "m.parent_id IS NULL" if parent_id is None else "m.parent_id = ?"
        params: tuple[str, ...] = (tenant, conversation_id)
        if parent_id is not None:
            params += (parent_id,)
        rows = self._run(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.tenant_id = ? "
            f"AND m.conversation_id = ? AND {parent} ORDER BY {self._d.row_order}",
            params,
        ).fetchall()
        return [message_from_row(row, self._d.codec) for row in rows]

    def child_counts(
        self, tenant: str, conversation_id: str, parent_ids: Sequence[str | None]
    ) -> dict[str | None, int]:
        wanted = [p for p in parent_ids if p is not None]
        rows = self._run(
            "SELECT m.parent_id, COUNT(*) FROM messages m WHERE m.tenant_id = ? "
            f"AND m.conversation_id = ? AND (m.parent_id {self._d.one_of} "
            "OR (? AND m.parent_id IS NULL)) GROUP BY m.parent_id",
            (tenant, conversation_id, self._d.ids(wanted), self._d.flag(None in parent_ids)),
        ).fetchall()
        return {row[0]: int(row[1]) for row in rows}

    def conversation_messages(self, tenant: str, conversation_id: str) -> list[Message]:
        rows = self._run(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.tenant_id = ? "
            f"AND m.conversation_id = ? ORDER BY m.depth, {self._d.row_order}",
            (tenant, conversation_id),
        ).fetchall()
        return [message_from_row(row, self._d.codec) for row in rows]

    def subtree_ids(self, tenant: str, message_id: str) -> list[str]:
        rows = self._run(
            """
            WITH RECURSIVE sub(id) AS (
                SELECT CAST(? AS TEXT)
                UNION ALL
                SELECT m.id FROM messages m JOIN sub ON m.tenant_id = ? AND m.parent_id = sub.id
            )
            SELECT id FROM sub
            """,
            (message_id, tenant),
        ).fetchall()
        return [row[0] for row in rows]

    def pinned(
        self, tenant: str, user: str, conversation_id: str | None
    ) -> list[PinnedInstruction]:
        self._lock_owner(tenant, user)  # a new pin's position is read from these
        rows = self._run(
            "SELECT id, text, conversation_id, position, created_at, origin "
            "FROM pinned_instructions WHERE tenant_id = ? AND user_id = ? "
            "AND (conversation_id IS NULL OR conversation_id = ?) "
            "ORDER BY conversation_id IS NOT NULL, position, id",
            (tenant, user, conversation_id),
        ).fetchall()
        time = self._d.codec.time
        return [
            PinnedInstruction(r[0], r[1], r[2], r[3], time(r[4]), pin_origin(r[5])) for r in rows
        ]

    # --- writes ---------------------------------------------------------------------------------

    def insert_conversation(self, tenant: str, record: ConversationRecord) -> None:
        d = self._d
        self._run(
            f"INSERT INTO conversations ({CONVERSATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (record.id, tenant, record.user_id, record.title, d.flag(record.temporary),
             record.active_leaf_id, d.json(dict(record.metadata)), d.iso(record.created_at)),
        )  # fmt: skip

    def set_active_leaf(self, tenant: str, conversation_id: str, leaf_id: str | None) -> None:
        self._run(
            "UPDATE conversations SET active_leaf_id = ? WHERE tenant_id = ? AND id = ?",
            (leaf_id, tenant, conversation_id),
        )

    def delete_messages(self, tenant: str, message_ids: Sequence[str]) -> None:
        self._cascade().erase(tenant, "message", message_ids)

    def delete_conversation(self, tenant: str, conversation_id: str) -> None:
        self._cascade().erase(tenant, "conversation", [conversation_id])

    def insert_pinned(self, tenant: str, user: str, admitted: Admitted[PinnedInstruction]) -> None:
        pin = admitted.value
        self._lock_owner(tenant, user)
        self._run(
            "INSERT INTO pinned_instructions (tenant_id, id, user_id, conversation_id, position, "
            "text, created_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (tenant, pin.id, user, pin.conversation_id, pin.position, pin.text,
             self._d.iso(pin.created_at), pin.origin),
        )  # fmt: skip

    def delete_pinned(self, tenant: str, user: str, pin_id: str) -> None:
        self._lock_owner(tenant, user)
        cursor = self._run(
            "DELETE FROM pinned_instructions WHERE tenant_id = ? AND user_id = ? AND id = ?",
            (tenant, user, pin_id),
        )
        if self._changed(cursor) == 0:
            raise NotFound("pinned instruction", pin_id)
