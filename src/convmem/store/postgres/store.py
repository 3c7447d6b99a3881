"""PostgreSQL implementation of the ``Store`` Protocol: conversations and messages, and the store.

Appends to one conversation are serialised by a row lock on the conversation (``FOR UPDATE`` when
a write transaction reads it), not a table lock: writers of different conversations never wait
for each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from convmem.errors import NotFound, StoreError
from convmem.model.conversation import ConversationRecord
from convmem.model.messages import Message
from convmem.store.conversations import (
    AppendState,
    BranchRow,
    ConversationRef,
    MessageRow,
    PinnedInstruction,
    RequestState,
    pin_origin,
)
from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.connection import (
    Connection,
    make_pool,
    map_error,
    transaction,
)
from convmem.store.postgres.embedder_switch import EmbedderSwitchTxnMixin
from convmem.store.postgres.entities import EntityTxnMixin
from convmem.store.postgres.lifecycle import LifecycleTxnMixin
from convmem.store.postgres.memories import MemoryTxnMixin
from convmem.store.postgres.memory_search import MemorySearchTxnMixin
from convmem.store.postgres.migrations import apply_migrations, pending_migrations
from convmem.store.postgres.options import options_from_url
from convmem.store.postgres.rows import CHAIN_CTE
from convmem.store.postgres.tools import ToolTxnMixin
from convmem.store.postgres.vector_index import ApproximateIndexTxnMixin
from convmem.store.postgres.vectors import VectorTxnMixin
from convmem.store.rows import (
    CONVERSATION_COLUMNS,
    DECODED,
    MESSAGE_COLUMNS,
    MESSAGE_WIDTH,
    conversation_from_row,
    message_from_row,
)
from convmem.store.sql.conversations import ConversationRows
from convmem.store.sql.derived import DerivedRows
from convmem.store.sql.idempotency import IdempotencyRows
from convmem.store.sql.keys import KeyTxnMixin

# Branch pages grow so a short window costs one query and a long one a handful.
_FIRST_PAGE = 48
_MAX_PAGE = 512
# A request's first page, sized by the tokens it will read (``request_state``'s reach), stops at
# this many messages whatever their size.
_MAX_FIRST_PAGE = 1024
# ``CHAIN_CTE`` that also stops once the messages walked add up to a number of estimated tokens.
# Parameters: start id, tenant, limit, tokens.
_REACH_CTE = """
    WITH RECURSIVE chain(id, n, tokens) AS (
        SELECT %s::text, 0, 0
        UNION ALL
        SELECT m.parent_id, chain.n + 1, chain.tokens + m.estimate_tokens FROM chain
        CROSS JOIN LATERAL (SELECT x.parent_id, x.estimate_tokens FROM messages x
            WHERE x.tenant_id = %s AND x.id = chain.id LIMIT 1) m
        WHERE m.parent_id IS NOT NULL AND chain.n + 1 < %s AND chain.tokens + m.estimate_tokens < %s
    )
"""


class PostgresTxn(
    ConversationRows,
    MemoryTxnMixin,
    DerivedRows,
    KeyTxnMixin,
    VectorTxnMixin,
    MemorySearchTxnMixin,
    ToolTxnMixin,
    EntityTxnMixin,
    LifecycleTxnMixin,
    IdempotencyRows,
    EmbedderSwitchTxnMixin,
    CascadeTxnMixin,
    ApproximateIndexTxnMixin,
):
    """Read and write primitives over one connection inside one transaction."""

    # --- reads ----------------------------------------------------------------------------------

    def get_conversation(self, tenant: str, user: str, conversation_id: str) -> ConversationRecord:
        sent = self._send_conversation(tenant, user, conversation_id)
        return self._conversation_of(sent, conversation_id)

    def _send_conversation(
        self, tenant: str, user: str, conversation_id: str
    ) -> psycopg.Cursor[Any]:
        # in a write, reading the conversation locks it: its active leaf is read, a message
        # placed under it and the leaf moved without another writer in between
        lock = " FOR UPDATE" if self._writable else ""
        return self._db.execute(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations "
            f"WHERE tenant_id = %s AND id = %s AND user_id = %s{lock}",
            (tenant, conversation_id, user),
        )

    @staticmethod
    def _conversation_of(sent: psycopg.Cursor[Any], conversation_id: str) -> ConversationRecord:
        row = sent.fetchone()
        if row is None:
            raise NotFound("conversation", conversation_id)
        return conversation_from_row(row, DECODED)

    def branch_messages(
        self, tenant: str, user: str, start_id: str, candidate_ids: Sequence[str]
    ) -> dict[str, Message]:
        if not candidate_ids:
            return {}
        # both queued, one round trip (the walk of a forked branch aside); every candidate is at
        # depth 0 or below, so the depth bound is 0
        found = self._send_messages(tenant, user, candidate_ids)
        on = self._on_branch_of(
            tenant, start_id, self._send_on_branch(tenant, start_id, candidate_ids, 0)
        )
        messages = (message_from_row(row, DECODED) for row in found.fetchall())
        return {message.id: message for message in messages if message.id in on}

    def _send_messages(
        self, tenant: str, user: str, message_ids: Sequence[str]
    ) -> psycopg.Cursor[Any]:
        return self._db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.tenant_id = %s "
            "AND m.user_id = %s AND m.id = ANY(%s)",
            (tenant, user, list(message_ids)),
        )

    def conversations_written_before(
        self, tenant: str, conversation_cutoff: str, message_cutoff: str, limit: int
    ) -> list[ConversationRef]:
        sql = (
            "SELECT c.user_id, c.id FROM conversations c WHERE c.tenant_id = %s AND c.id < %s "
            "AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.tenant_id = %s "
            "AND m.conversation_id = c.id AND m.id >= %s) ORDER BY c.id LIMIT %s"
        )
        params = (tenant, conversation_cutoff, tenant, message_cutoff, limit)
        rows = self._db.execute(sql, params).fetchall()
        if not self._writable or not rows:
            return [ConversationRef(r[0], r[1]) for r in rows]
        # The caller deletes what this returns in the same transaction: lock the candidates
        # (in id order, as every multi-conversation lock is taken), then check again with a new
        # snapshot, so a conversation that received a message meanwhile is left alone.
        self._db.execute(
            "SELECT 1 FROM conversations WHERE tenant_id = %s AND id = ANY(%s) "
            "ORDER BY id FOR UPDATE",
            (tenant, [r[1] for r in rows]),
        )
        rows = self._db.execute(sql, params).fetchall()
        return [ConversationRef(r[0], r[1]) for r in rows]

    def get_branch_row(self, tenant: str, user: str, message_id: str) -> BranchRow:
        row = self._send_branch_row(tenant, user, "%s", (message_id,)).fetchone()
        if row is None:
            raise NotFound("message", message_id)
        return _branch_row(row)

    def _send_branch_row(
        self, tenant: str, user: str, which: str, params: tuple[str | None, ...]
    ) -> psycopg.Cursor[Any]:
        """The principal's message ``which`` (an SQL expression of its id) with its estimate
        costs, queued."""
        return self._db.execute(
            f"SELECT {MESSAGE_COLUMNS}, m.estimate_tokens, m.estimate_before FROM messages m "
            f"WHERE m.tenant_id = %s AND m.id = {which} AND m.user_id = %s",
            (tenant, *params, user),
        )

    def append_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        parent_id: str | None,
        *,
        under_active_leaf: bool = False,
    ) -> AppendState:
        # both queued, one round trip: the parent's statement runs after the conversation's
        # (which, in a write, waits for the lock), so it sees the active leaf the lock guards
        conversation = self._send_conversation(tenant, user, conversation_id)
        if under_active_leaf:
            which: str | None = (
                "(SELECT c.active_leaf_id FROM conversations c "
                "WHERE c.tenant_id = %s AND c.id = %s AND c.user_id = %s)"
            )
            params: tuple[str | None, ...] = (tenant, conversation_id, user)
        elif parent_id is not None:
            which, params = "%s", (parent_id,)
        else:  # a root: no parent to read
            which, params = None, ()
        parent = None if which is None else self._send_branch_row(tenant, user, which, params)
        # and what indexing the new message reads (its parent's and grandparent's index rows)
        ahead = None if which is None else self._read_indexed_ahead(tenant, user, which, params)
        record = self._conversation_of(conversation, conversation_id)
        row = None if parent is None else parent.fetchone()
        wanted = record.active_leaf_id if under_active_leaf else parent_id
        if wanted is None:
            return AppendState(record, None)
        if row is None:
            raise NotFound("message", wanted)
        found = _branch_row(row)
        if found.message.conversation_id != conversation_id:
            raise NotFound("message", wanted)
        if ahead is not None:
            self._expect_indexed_ahead(ahead, [found.message.id, found.message.parent_id])
        return AppendState(record, found)

    def branch(self, tenant: str, leaf_id: str, tokenizer: str) -> Iterator[BranchRow]:
        first = self._send_branch_page(tenant, "%s::text", (leaf_id,), _FIRST_PAGE, tokenizer)
        return self._branch_from(tenant, first, _FIRST_PAGE, tokenizer)

    def _send_branch_page(
        self,
        tenant: str,
        start: str,
        start_params: tuple[str | None, ...],
        page: int,
        tokenizer: str,
        user: str | None = None,
        reach: int = 0,
    ) -> psycopg.Cursor[Any]:
        """A page of the path towards the root from ``start`` (an SQL expression of the start
        id, with ``start_params``), queued (pipeline mode); ``_branch_from`` reads it. With
        ``user``, only that principal's messages (a start of another principal reads none).
        With ``reach``, the page ends once its messages' estimates add up to that many tokens
        (or at ``page`` messages)."""
        mine = "" if user is None else " AND x.user_id = %s"
        walk: tuple[object, ...] = (*start_params, tenant, page) + ((reach,) if reach > 0 else ())
        chain = (_REACH_CTE if reach > 0 else CHAIN_CTE).replace(
            "SELECT %s::text, 0", f"SELECT {start}, 0", 1
        )
        return self._db.execute(
            chain
            + f"""
            SELECT {MESSAGE_COLUMNS}, (m.tokens ->> %s)::int, m.estimate_tokens,
                m.estimate_before, (m.media_tokens ->> %s)::int
            FROM chain CROSS JOIN LATERAL (SELECT x.* FROM messages x
                WHERE x.tenant_id = %s AND x.id = chain.id{mine} LIMIT 1) m
            ORDER BY chain.n
            """,
            (*walk, tokenizer, tokenizer, tenant) + (() if user is None else (user,)),
        )

    def _branch_from(
        self, tenant: str, sent: psycopg.Cursor[Any], page: int, tokenizer: str
    ) -> Iterator[BranchRow]:
        """The rows of the page ``sent``, then page after page on towards the root (each page
        read only when the caller asks past the last)."""
        while True:
            rows = sent.fetchall()
            for row in rows:
                tokens, estimate, before, media = row[MESSAGE_WIDTH:]
                yield BranchRow(
                    message_from_row(row, DECODED), tokens, estimate, before, media or 0
                )
            next_id = rows[-1][2] if rows else None
            if next_id is None:
                return
            page = min(max(page, len(rows)) * 2, _MAX_PAGE)
            sent = self._send_branch_page(tenant, "%s::text", (next_id,), page, tokenizer)

    def read_recall_ahead(self, tenant: str, user: str, conversation_id: str) -> None:
        # what memory recall asks next (the tenant's and the user's memory switches), queued to
        # travel with the next read so it costs no round trip of its own
        self._prefetch(*self._tenant_policy_read(tenant))
        self._prefetch(*self._memory_enabled_read(tenant, user))
        # and what recall of evicted turns asks first (the conversation's speakers)
        self._prefetch(*self._speakers_read(tenant, conversation_id))

    def request_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        leaf_id: str | None,
        tokenizer: str,
        reach: int = 0,
    ) -> RequestState:
        # the reads queued, then read: one round trip. The branch starts at the given leaf,
        # or at the conversation's active leaf (read by the page's own statement).
        conversation = self._send_conversation(tenant, user, conversation_id)
        pins = self._send_pinned(tenant, user, conversation_id)
        last = self._send_last_assembly(tenant, user, conversation_id)
        if leaf_id is None:
            start = (
                "(SELECT c.active_leaf_id FROM conversations c "
                "WHERE c.tenant_id = %s AND c.id = %s AND c.user_id = %s)"
            )
            params: tuple[str | None, ...] = (tenant, conversation_id, user)
        else:
            start, params = "%s::text", (leaf_id,)
        rows = _MAX_FIRST_PAGE if reach > 0 else _FIRST_PAGE
        page = self._send_branch_page(tenant, start, params, rows, tokenizer, user, reach)
        self.read_recall_ahead(tenant, user, conversation_id)
        record = self._conversation_of(conversation, conversation_id)
        state = RequestState(
            conversation=record,
            leaf_id=leaf_id or record.active_leaf_id,
            pins=self._pins_of(pins),
            last_assembly=self._last_assembly_of(last),
            branch=self._branch_from(tenant, page, _FIRST_PAGE, tokenizer),
        )
        if state.leaf_id is None:
            page.fetchall()  # (none: the conversation is empty)
            return replace(state, branch=iter(()))
        if leaf_id is not None:  # the given leaf must be a message of this conversation
            first = next(state.branch, None)
            if first is None or first.message.conversation_id != conversation_id:
                raise NotFound("message", leaf_id)
            return replace(state, branch=itertools.chain([first], state.branch))
        return state

    def pinned(
        self, tenant: str, user: str, conversation_id: str | None
    ) -> list[PinnedInstruction]:
        self._lock_owner(tenant, user)  # a new pin's position is read from these
        return self._pins_of(self._send_pinned(tenant, user, conversation_id))

    def _send_pinned(
        self, tenant: str, user: str, conversation_id: str | None
    ) -> psycopg.Cursor[Any]:
        return self._db.execute(
            "SELECT id, text, conversation_id, position, created_at, origin "
            "FROM pinned_instructions "
            "WHERE tenant_id = %s AND user_id = %s "
            "AND (conversation_id IS NULL OR conversation_id = %s) "
            "ORDER BY conversation_id IS NOT NULL, position, id",
            (tenant, user, conversation_id),
        )

    @staticmethod
    def _pins_of(sent: psycopg.Cursor[Any]) -> list[PinnedInstruction]:
        rows = sent.fetchall()
        return [PinnedInstruction(r[0], r[1], r[2], r[3], r[4], pin_origin(r[5])) for r in rows]

    # --- writes ---------------------------------------------------------------------------------

    def insert_messages(self, tenant: str, user: str, rows: Sequence[MessageRow]) -> None:
        if not rows:
            return
        # executemany sends the rows in one pipeline; the order given is the insert order
        self._db.cursor().executemany(
            "INSERT INTO messages (tenant_id, id, user_id, conversation_id, parent_id, depth, "
            "role, content, tool_calls, tool_call_id, metadata, created_at, revision_of, "
            "revision_kind, tokens, estimate_tokens, estimate_before, parts, media_tokens) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    tenant, m.id, user, m.conversation_id, m.parent_id, m.depth, m.role,
                    m.content,
                    Jsonb([call.to_dict() for call in m.tool_calls]) if m.tool_calls else None,
                    m.tool_call_id, Jsonb(dict(m.metadata)), m.created_at, row.revision_of,
                    row.revision_kind, Jsonb(dict(row.tokens)), row.estimate_tokens,
                    row.estimate_before,
                    Jsonb([part.to_dict() for part in m.parts]) if m.parts else None,
                    Jsonb({k: v for k, v in row.media_tokens.items() if v}),
                )
                for row in rows
                for m in (row.message,)
            ],
        )  # fmt: skip
        blobs = [
            (tenant, row.message.id, sha256, data)
            for row in rows
            for sha256, data in row.blobs.items()
        ]
        if blobs:
            self._db.cursor().executemany(
                "INSERT INTO message_blobs (tenant_id, message_id, sha256, data) "
                "VALUES (%s, %s, %s, %s)",
                blobs,
            )


def _branch_row(row: Any) -> BranchRow:
    estimate, before = row[MESSAGE_WIDTH:]
    return BranchRow(message_from_row(row, DECODED), None, estimate, before)


class PostgresStore:
    """A PostgreSQL database shared by threads (a pooled connection per transaction) and by
    processes (row locks). ``migrate``: apply pending migrations first (else a database that
    lacks some is refused with the command that brings it up to date)."""

    @property
    def reindex_needed(self) -> bool:
        return False  # the index exists from the first migration on

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        min_size: int = 1,
        max_size: int | None = None,
        connection_class: type[Connection] = psycopg.Connection,
    ) -> None:
        self.url = url
        try:
            with connection_class.connect(url, autocommit=True) as db:
                if migrate:
                    apply_migrations(db)
                missing = pending_migrations(db)
        except psycopg.Error as exc:
            raise map_error(exc) from exc
        if missing:
            raise StoreError(
                f"the database lacks {len(missing)} migration(s); run `convmem migrate --db URL` "
                "or open it with migrate=True"
            )
        size = max_size or options_from_url(url).pool_size  # (the URL's, or the default)
        self._pool = make_pool(
            url, min_size=min(min_size, size), max_size=size, connection_class=connection_class
        )

    @contextmanager
    def read(self) -> Iterator[PostgresTxn]:
        with transaction(self._pool, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY") as db:
            yield PostgresTxn(db, writable=False)

    @contextmanager
    def write(self) -> Iterator[PostgresTxn]:
        with transaction(self._pool, "BEGIN ISOLATION LEVEL READ COMMITTED") as db:
            yield PostgresTxn(db, writable=True)

    def refresh_statistics(self) -> None:
        # autovacuum analyses a table only after enough changes and on its own schedule: until
        # then the planner sees the tables an import just filled as empty, and assembling on a
        # freshly imported 100k branch took 548-884 ms instead of 15-21 ms (issue 31)
        try:
            with self._pool.connection() as db:
                db.execute(f"ANALYZE {', '.join(IMPORTED_TABLES)}")
        except psycopg.Error as exc:
            raise map_error(exc) from exc

    def close(self) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({_redacted(self.url)!r})"


# the tables a bulk import writes (importers/bulk.py's transaction)
IMPORTED_TABLES = ("conversations", "messages", "message_index", "conversation_terms")


def _redacted(url: str) -> str:
    """The URL without its password, for logs and reprs."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
