"""SQLite implementation of the ``Store`` Protocol."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from convmem.model.deadline import Deadline
from convmem.model.entities import Entity, EntityFact
from convmem.model.messages import Message
from convmem.store.conversations import (
    AppendState,
    BranchRow,
    ConversationRef,
    MessageRow,
    RequestState,
    plain_append_state,
    plain_branch_messages,
    plain_request_state,
)
from convmem.store.entities import (
    EntityTurnRow,
    plain_counted_entity_turns,
    plain_named_entity_facts,
)
from convmem.store.ranking import Window
from convmem.store.rows import (
    MESSAGE_COLUMNS,
    MESSAGE_WIDTH,
    message_from_row,
)
from convmem.store.sql.conversations import ConversationRows
from convmem.store.sql.derived import DerivedRows
from convmem.store.sql.idempotency import IdempotencyRows
from convmem.store.sql.keys import KeyTxnMixin
from convmem.store.sqlite.accelerator import VectorsCache
from convmem.store.sqlite.cascade import CascadeTxnMixin
from convmem.store.sqlite.connection import Statements, connect, transaction
from convmem.store.sqlite.embedder_switch import EmbedderSwitchTxnMixin
from convmem.store.sqlite.entities import EntityTxnMixin
from convmem.store.sqlite.erase import erase_deleted_fts
from convmem.store.sqlite.lifecycle import LifecycleTxnMixin
from convmem.store.sqlite.memories import MemoryTxnMixin
from convmem.store.sqlite.migrations import apply_migrations
from convmem.store.sqlite.ranking import RankingTxnMixin
from convmem.store.sqlite.search import SearchTxnMixin
from convmem.store.sqlite.sql import CHAIN_CTE, SQLITE, TEXT_CODEC
from convmem.store.sqlite.tools import ToolTxnMixin
from convmem.store.sqlite.writer_lock import release_writer_lock, writer_lock

# Branch pages grow so a short window costs one query and a long one a handful.
_FIRST_PAGE = 48
_MAX_PAGE = 512


class SQLiteTxn(
    ConversationRows,
    MemoryTxnMixin,
    DerivedRows,
    KeyTxnMixin,
    SearchTxnMixin,
    RankingTxnMixin,
    ToolTxnMixin,
    EntityTxnMixin,
    LifecycleTxnMixin,
    IdempotencyRows,
    EmbedderSwitchTxnMixin,
    CascadeTxnMixin,
):
    """Read and write primitives over one connection inside one transaction."""

    _d = SQLITE

    def __init__(self, db: Statements, vectors: VectorsCache) -> None:
        self._db = db
        self._vectors = vectors

    def time_limited(self, deadline: Deadline) -> AbstractContextManager[None]:
        return self._db.time_limited(deadline)

    # --- reads ----------------------------------------------------------------------------------

    def has_messages(self) -> bool:
        return self._db.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None

    def append_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        parent_id: str | None,
        *,
        under_active_leaf: bool = False,
    ) -> AppendState:
        return plain_append_state(
            self, tenant, user, conversation_id, parent_id, under_active_leaf=under_active_leaf
        )

    def request_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        leaf_id: str | None,
        tokenizer: str,
        reach: int = 0,
    ) -> RequestState:
        return plain_request_state(self, tenant, user, conversation_id, leaf_id, tokenizer)

    def branch_messages(
        self, tenant: str, user: str, start_id: str, candidate_ids: Sequence[str]
    ) -> dict[str, Message]:
        return plain_branch_messages(self, tenant, user, start_id, candidate_ids)

    def named_entity_facts(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str],
        outside_conversation: str | None, confirmed_only: bool, limit: int,
    ) -> tuple[list[Entity], list[EntityFact]]:  # fmt: skip
        return plain_named_entity_facts(
            self, tenant, user, keys, scopes=scopes, outside_conversation=outside_conversation,
            confirmed_only=confirmed_only, limit=limit,
        )  # fmt: skip

    def counted_entity_turns(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str], *,
        window: Window, limit: int, cap: int,
    ) -> tuple[list[EntityTurnRow], int]:  # fmt: skip
        return plain_counted_entity_turns(self, tenant, user, conversation_id, entity_ids,
                                          window=window, limit=limit, cap=cap)  # fmt: skip

    def conversations_written_before(
        self, tenant: str, conversation_cutoff: str, message_cutoff: str, limit: int
    ) -> list[ConversationRef]:
        # both ranges are primary-key ranges; only the messages written since the cutoff are read
        rows = self._db.execute(
            "SELECT c.user_id, c.id FROM conversations c WHERE c.tenant_id = ? AND c.id < ? "
            "AND c.id NOT IN (SELECT m.conversation_id FROM messages m "
            "WHERE m.tenant_id = ? AND m.id >= ?) ORDER BY c.id LIMIT ?",
            (tenant, conversation_cutoff, tenant, message_cutoff, limit),
        ).fetchall()
        return [ConversationRef(r[0], r[1]) for r in rows]

    def branch(self, tenant: str, leaf_id: str, tokenizer: str) -> Iterator[BranchRow]:
        next_id: str | None = leaf_id
        page = _FIRST_PAGE
        while next_id is not None:
            rows = self._db.execute(
                CHAIN_CTE
                + f"""
                SELECT {MESSAGE_COLUMNS}, t.tokens, m.estimate_tokens, m.estimate_before,
                    t.media_tokens
                FROM chain
                JOIN messages m ON m.tenant_id = ? AND m.id = chain.id
                LEFT JOIN message_tokens t
                    ON t.tenant_id = m.tenant_id AND t.message_id = m.id AND t.tokenizer = ?
                ORDER BY chain.n
                """,
                (next_id, tenant, page, tenant, tokenizer),
            ).fetchall()
            for row in rows:
                tokens, estimate, before, media = row[MESSAGE_WIDTH:]
                yield BranchRow(
                    message_from_row(row, TEXT_CODEC), tokens, estimate, before, media or 0
                )
            next_id = rows[-1][2] if rows else None
            page = min(page * 2, _MAX_PAGE)

    # --- writes ---------------------------------------------------------------------------------

    def insert_messages(self, tenant: str, user: str, rows: Sequence[MessageRow]) -> None:
        self._db.insert_rows(
            "INSERT INTO messages (tenant_id, id, user_id, conversation_id, parent_id, depth, "
            "role, content, tool_calls, tool_call_id, metadata, created_at, revision_of, "
            "revision_kind, estimate_tokens, estimate_before, parts) VALUES ",
            [
                (
                    tenant, m.id, user, m.conversation_id, m.parent_id, m.depth, m.role,
                    m.content,
                    json.dumps([call.to_dict() for call in m.tool_calls]) if m.tool_calls else None,
                    m.tool_call_id, json.dumps(dict(m.metadata)), m.created_at.isoformat(),
                    row.revision_of, row.revision_kind, row.estimate_tokens, row.estimate_before,
                    json.dumps([part.to_dict() for part in m.parts]) if m.parts else None,
                )
                for row in rows
                for m in (row.message,)
            ],
        )  # fmt: skip
        self._db.insert_rows(
            "INSERT INTO message_tokens (tenant_id, message_id, tokenizer, tokens, media_tokens) "
            "VALUES ",
            [
                (tenant, row.message.id, name, count, row.media_tokens.get(name, 0))
                for row in rows
                for name, count in row.tokens.items()
            ],
        )
        self._db.executemany(
            "INSERT INTO message_blobs (tenant_id, message_id, sha256, data) VALUES (?, ?, ?, ?)",
            [
                (tenant, row.message.id, sha256, data)
                for row in rows
                for sha256, data in row.blobs.items()
            ],
        )


# rows changed (as SQLite counts them, triggers included) between the store's WAL checkpoints
CHECKPOINT_AFTER_CHANGES = 1000


class SQLiteStore:
    """A database file shared safely by threads (a connection each) and processes (WAL)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if self.path != ":memory:":
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._vectors = VectorsCache()  # shared by the threads' transactions
        self._writer_lock = writer_lock(self.path)
        self._writer_lock_held = True  # released once, by the first close
        self._own_checkpoints = False
        self._changes_since_checkpoint = 0
        try:
            applied = apply_migrations(self._connection())
        except BaseException:
            self.close()  # a refused or failed migration leaves no connection or descriptor
            raise
        # From here the store checkpoints the WAL itself, after a write has let go of the writer
        # lock: SQLite's automatic checkpoint runs inside COMMIT, so every other writer, in this
        # process and the others, waited through its fsync (the tail of the service's latency).
        with self._lock:
            self._own_checkpoints = True
            for db in self._connections:
                db.execute("PRAGMA wal_autocheckpoint = 0")
        # a database that had messages before the search index existed needs them indexed
        self.reindex_needed = "m020_message_index" in applied and self._has_messages()

    def _has_messages(self) -> bool:
        with self.read() as tx:
            return tx.has_messages()

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = connect(self.path)
            self._local.db = db
            with self._lock:
                if self._own_checkpoints:
                    db.execute("PRAGMA wal_autocheckpoint = 0")
                self._connections.append(db)
        return db

    @contextmanager
    def read(self) -> Iterator[SQLiteTxn]:
        db = self._connection()
        with transaction(db, "DEFERRED") as statements:
            yield SQLiteTxn(statements, self._vectors)

    @contextmanager
    def write(self) -> Iterator[SQLiteTxn]:
        db = self._connection()
        changes_before = db.total_changes
        # writers queue on our lock before SQLite's, whose busy handler sleeps (see writer_lock)
        with self._writer_lock.hold(), transaction(db, "IMMEDIATE") as statements:
            yield SQLiteTxn(statements, self._vectors)
            erase_deleted_fts(statements)
        self._checkpoint_when_due(db, db.total_changes - changes_before)

    def _checkpoint_when_due(self, db: sqlite3.Connection, changed: int) -> None:
        """A passive checkpoint once the writes since the last one changed enough rows (about
        as often as SQLite's own, every 1,000 pages): it waits on no reader or writer, and a
        writer may append to the WAL meanwhile."""
        with self._lock:
            self._changes_since_checkpoint += changed
            if self._changes_since_checkpoint < CHECKPOINT_AFTER_CHANGES:
                return
            self._changes_since_checkpoint = 0
        # failing (e.g. another process checkpointing) is fine: the next one catches up
        with contextlib.suppress(sqlite3.Error):
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def refresh_statistics(self) -> None:
        """Nothing to do: the SQLite store keeps no planner statistics (no ``sqlite_stat1``); its
        queries are planned by their indexes alone, the same for an empty file and a full one."""

    def close(self) -> None:
        with self._lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
            lock, self._writer_lock_held = self._writer_lock_held, False
        self._local = threading.local()
        if lock:
            release_writer_lock(self._writer_lock)
