"""SQLite's search index (``IndexReads``/``IndexWrites``): the message index (FTS5 through
triggers, float16 vectors), conversation vocabularies, word and memory vectors. Ranking over it is
``convmem.store.sqlite.ranking``.

Each index row carries owner tokens in its FTS5 ``scope`` column (see ``conversation_token``), so
a full-text query can intersect with one conversation's postings.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from convmem.errors import InvalidInput
from convmem.store.embedder_switch import may_build, may_serve
from convmem.store.index_form import stored_index_form
from convmem.store.search_index import (
    EmbeddedTurn,
    IndexedBody,
    IndexedRow,
    IndexEntry,
    MemoryVector,
    MessageVector,
    MissingMemoryVector,
    MissingMessageVector,
    MissingTermVector,
    TermVector,
    UnindexedMessage,
    Vector,
)
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.term_counts import column_terms
from convmem.store.sqlite.vectors import from_blob, to_blob


def conversation_token(tenant: str, conversation_id: str) -> str:
    return "c" + tenant.encode().hex() + "x" + conversation_id.encode().hex()


def user_token(tenant: str, user: str) -> str:
    return "u" + tenant.encode().hex() + "x" + user.encode().hex()


def memory_owner_token(tenant: str, user: str) -> str:
    # the same text as migration m021's SQL: 'm' || hex(tenant_id) || 'x' || hex(user_id)
    return "m" + tenant.encode().hex().upper() + "x" + user.encode().hex().upper()


def _counted(form: str | None, text: str) -> tuple[str, int]:
    """A column's stored term counts and length, from what the index holds of it (its index
    form when it has one)."""
    counted = column_terms(text if form is None else form)
    return counted.counts, counted.words


def _in(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


class SearchTxnMixin:
    _db: Statements

    # --- the message index ----------------------------------------------------------------------

    def index_messages(self, tenant: str, user: str, entries: Sequence[IndexEntry]) -> None:
        owner = user_token(tenant, user)
        scopes: dict[str, str] = {}  # per conversation: the same tokens for each of its rows
        for entry in entries:
            if entry.conversation_id not in scopes:
                conversation = conversation_token(tenant, entry.conversation_id)
                scopes[entry.conversation_id] = f"{conversation} {owner}"
        rows = [
            (
                tenant, entry.message_id, user, entry.conversation_id, entry.depth,
                utc_text(entry.created_at), entry.speaker, entry.session,
                scopes[entry.conversation_id], entry.body, entry.ctx, body_form, ctx_form,
                *_counted(body_form, entry.body), *_counted(ctx_form, entry.ctx),
                entry.embedder, None if entry.vector is None else to_blob(entry.vector),
            )
            for entry in entries
            for body_form, ctx_form in [(stored_index_form(entry.body),
                                         stored_index_form(entry.ctx))]
        ]  # fmt: skip
        # Many rows per statement, not one statement run per row: the FTS5 trigger's postings are
        # written out each time a statement starts (SQLite opens a statement savepoint, and FTS5
        # flushes its pending terms there), so an executemany writes a tiny segment per row and
        # merges them again. The same index, in about a third of the time for an import's batch.
        self._db.insert_rows(
            "INSERT OR REPLACE INTO message_index (tenant_id, message_id, user_id, "
            "conversation_id, depth, created_at, speaker, session, scope, body, ctx, "
            "body_form, ctx_form, body_terms, body_words, ctx_terms, ctx_words, embedder, "
            "vector) VALUES ",
            rows,
        )

    def set_index_context(self, tenant: str, message_id: str, ctx: str) -> None:
        form = stored_index_form(ctx)
        self._db.execute(
            "UPDATE message_index SET ctx = ?, ctx_form = ?, ctx_terms = ?, ctx_words = ? "
            "WHERE tenant_id = ? AND message_id = ? AND ctx IS NOT ?",
            (ctx, form, *_counted(form, ctx), tenant, message_id, ctx),
        )

    def indexed_rows(self, tenant: str, message_ids: Sequence[str]) -> dict[str, IndexedRow]:
        if not message_ids:
            return {}
        rows = self._db.execute(
            "SELECT i.message_id, i.speaker, i.session, i.created_at, i.body, i.depth, "
            "m.parent_id FROM message_index i JOIN messages m "
            "ON m.tenant_id = i.tenant_id AND m.id = i.message_id "
            f"WHERE i.tenant_id = ? AND i.message_id IN ({_in(message_ids)})",
            (tenant, *message_ids),
        ).fetchall()
        return {
            r[0]: IndexedRow(r[0], r[1], r[2], datetime.fromisoformat(r[3]), r[4], r[5], r[6])
            for r in rows
        }

    def latest_indexed_child(self, tenant: str, conversation_id: str, parent_id: str) -> str | None:
        row = self._db.execute(
            "SELECT i.message_id FROM messages m JOIN message_index i "
            "ON i.tenant_id = m.tenant_id AND i.message_id = m.id "
            "WHERE m.tenant_id = ? AND m.conversation_id = ? AND m.parent_id = ? "
            "ORDER BY m.rowid DESC LIMIT 1",
            (tenant, conversation_id, parent_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def unindexed_messages(self, after: str | None, limit: int) -> list[UnindexedMessage]:
        # a cheap pre-filter: SQLite's trim() strips spaces only, so a caller must still skip
        # what ``indexable`` refuses, and the rowid cursor makes sure it is not seen twice
        try:
            position = 0 if after is None else int(after)
        except ValueError:
            raise InvalidInput("not a cursor unindexed_messages returned") from None
        rows = self._db.execute(
            "SELECT m.rowid, m.tenant_id, m.user_id, m.id FROM messages m WHERE m.rowid > ? "
            "AND NOT EXISTS (SELECT 1 FROM message_index i WHERE i.tenant_id = m.tenant_id "
            "AND i.message_id = m.id) AND m.role != 'tool' AND trim(m.content) != '' "
            "ORDER BY m.rowid LIMIT ?",
            (position, limit),
        ).fetchall()
        return [UnindexedMessage(str(r[0]), r[1], r[2], r[3]) for r in rows]

    def _bump(self, tenant: str, conversation_ids: Sequence[str]) -> None:
        self._db.executemany(
            "UPDATE search_generations SET generation = generation + 1 "
            "WHERE tenant_id = ? AND conversation_id = ?",
            [(tenant, c) for c in set(conversation_ids)],
        )

    def missing_message_vectors(self, embedder: str, limit: int) -> list[MissingMessageVector]:
        rows = self._db.execute(
            "SELECT tenant_id, message_id, speaker, body FROM message_index "
            "WHERE (embedder IS NOT ? OR vector IS NULL) "
            f"AND {may_serve('message_index.tenant_id', '?')} ORDER BY id LIMIT ?",
            (embedder, embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2], r[3]) for r in rows]

    def embedded_message_vectors(self, embedder: str, after: int, limit: int) -> list[EmbeddedTurn]:
        rows = self._db.execute(
            "SELECT tenant_id, message_id, speaker, body, id FROM message_index "
            "WHERE embedder = ? AND vector IS NOT NULL AND id > ? ORDER BY id LIMIT ?",
            (embedder, after, limit),
        ).fetchall()
        return [EmbeddedTurn(r[0], r[1], r[2], r[3], int(r[4])) for r in rows]

    def set_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        self._db.executemany(
            "UPDATE message_index SET embedder = ?, vector = ? "
            f"WHERE tenant_id = ? AND message_id = ? AND {may_serve('?', '?')}",
            [
                (embedder, to_blob(v.vector), tenant, v.message_id, tenant, embedder)
                for v in vectors
            ],
        )

    # SQLite ranks a conversation's vectors exactly, in memory (``accelerator``): it has no
    # approximate index to add turns to
    def conversations_to_index(self, limit: int) -> list[tuple[str, str]]:
        return []

    def index_conversation_step(self, tenant: str, conversation_id: str, depths: int) -> bool:
        return True

    def indexed_bodies(self, tenant: str, conversation_id: str) -> list[IndexedBody]:
        rows = self._db.execute(
            "SELECT speaker, body FROM message_index WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchall()
        return [IndexedBody(r[0], r[1]) for r in rows]

    def on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> set[str]:
        """The candidates that are ``start_id`` or its ancestors, down to ``min_depth``.

        A message alone at its depth in its conversation is an ancestor of every deeper one
        (each has an ancestor at every smaller depth, and there is only that one), so only the
        candidates at a depth a fork shares need the walk up from ``start_id``: the work is the
        candidates' and the forks', not the distance to the oldest candidate (a walk of every
        turn of a long conversation, which recall asked for on every request)."""
        if not candidate_ids:
            return set()
        start = self._db.execute(
            "SELECT conversation_id, depth FROM messages WHERE tenant_id = ? AND id = ?",
            (tenant, start_id),
        ).fetchone()
        if start is None:
            return set()
        conversation_id, start_depth = start
        # each candidate looked up by its key: the unary plus keeps SQLite's planner from
        # reading the whole conversation through its (tenant, conversation, …) indexes instead
        # (80 ms a search at 100,000 turns, the largest share of recall's time)
        rows = self._db.execute(
            "SELECT id, depth FROM messages WHERE tenant_id = ? AND +conversation_id = ? "
            f"AND id IN ({_in(candidate_ids)})",
            (tenant, conversation_id, *candidate_ids),
        ).fetchall()
        depths = {r[0]: int(r[1]) for r in rows if min_depth <= r[1] <= start_depth}
        levels = sorted(set(depths.values()))
        if not levels:
            return set()
        shared = {
            int(r[0])
            for r in self._db.execute(
                "SELECT depth FROM messages WHERE tenant_id = ? AND conversation_id = ? "
                f"AND depth IN ({_in(levels)}) GROUP BY depth HAVING count(*) > 1",
                (tenant, conversation_id, *levels),
            ).fetchall()
        }
        found = {m for m, depth in depths.items() if depth not in shared}
        forked = {m for m in depths if m not in found}
        if forked:
            walked = self._ancestors(tenant, start_id, min(depths[m] for m in forked))
            found |= forked & walked
        return found

    def _ancestors(self, tenant: str, start_id: str, min_depth: int) -> set[str]:
        """``start_id`` and its ancestors down to ``min_depth``."""
        rows = self._db.execute(
            """
            WITH RECURSIVE up(id, parent_id, depth) AS (
                SELECT id, parent_id, depth FROM messages WHERE tenant_id = ? AND id = ?
                UNION ALL
                SELECT m.id, m.parent_id, m.depth FROM up
                JOIN messages m ON m.tenant_id = ? AND m.id = up.parent_id
                WHERE up.depth > ?
            )
            SELECT id FROM up
            """,
            (tenant, start_id, tenant, min_depth),
        ).fetchall()
        return {r[0] for r in rows}

    # --- a conversation's vocabulary ------------------------------------------------------------

    def add_terms(
        self, tenant: str, conversation_id: str, words: Sequence[str], speakers: Sequence[str]
    ) -> None:
        self._db.executemany(
            "INSERT INTO conversation_terms (tenant_id, conversation_id, term, speaker) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, conversation_id, term) DO "
            "UPDATE SET speaker = max(speaker, excluded.speaker)",
            [(tenant, conversation_id, w, 0) for w in words]
            + [(tenant, conversation_id, s, 1) for s in speakers],
        )
        # no generation bump: terms arrive with a new index row, whose insert bumped it

    def retain_terms(
        self, tenant: str, conversation_id: str, words: set[str], speakers: set[str]
    ) -> None:
        """Forget the words and speakers no remaining message of the conversation has."""
        rows = self._db.execute(
            "SELECT term, speaker FROM conversation_terms "
            "WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchall()
        doomed = [r[0] for r in rows if r[0] not in (speakers if r[1] else words)]
        self._db.executemany(
            "DELETE FROM conversation_terms WHERE tenant_id = ? AND conversation_id = ? "
            "AND term = ?",
            [(tenant, conversation_id, term) for term in doomed],
        )
        if doomed:
            self._bump(tenant, [conversation_id])

    def conversation_speakers(self, tenant: str, conversation_id: str) -> list[str]:
        rows = self._db.execute(
            "SELECT term FROM conversation_terms WHERE tenant_id = ? AND conversation_id = ? "
            "AND speaker = 1 ORDER BY term",
            (tenant, conversation_id),
        ).fetchall()
        return [r[0] for r in rows]

    def stored_term_vectors(
        self, tenant: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        return {r[0]: from_blob(r[1]) for r in self._term_rows(tenant, embedder, words, ", vector")}

    def _term_rows(
        self, tenant: str, embedder: str, words: Sequence[str], columns: str
    ) -> list[Any]:
        found: list[Any] = []
        for start in range(0, len(words), 500):
            chunk = list(words[start : start + 500])
            found += self._db.execute(
                f"SELECT term{columns} FROM term_vectors WHERE tenant_id = ? AND embedder = ? "
                f"AND term IN ({_in(chunk)})",
                (tenant, embedder, *chunk),
            ).fetchall()
        return found

    def missing_term_vectors(self, embedder: str, limit: int) -> list[MissingTermVector]:
        rows = self._db.execute(
            "SELECT DISTINCT t.tenant_id, t.term FROM conversation_terms t "
            "WHERE t.speaker = 0 AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = t.tenant_id AND v.embedder = ? AND v.term = t.term) "
            f"AND {may_build('t.tenant_id', '?')} LIMIT ?",
            (embedder, embedder, embedder, limit),
        ).fetchall()
        return [MissingTermVector(r[0], r[1]) for r in rows]

    def set_term_vectors(self, tenant: str, embedder: str, vectors: Sequence[TermVector]) -> None:
        # only words without a vector yet: their conversations' cached vocabularies go stale
        held = {row[0] for row in self._term_rows(tenant, embedder, [v.term for v in vectors], "")}
        new = [v for v in vectors if v.term not in held]
        if not new:
            return
        self._db.executemany(
            "INSERT OR IGNORE INTO term_vectors (tenant_id, embedder, term, vector) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM conversation_terms "
            f"WHERE tenant_id = ? AND term = ?) AND {may_build('?', '?')}",
            [
                (
                    tenant,
                    embedder,
                    v.term,
                    to_blob(v.vector),
                    tenant,
                    v.term,
                    tenant,
                    embedder,
                    embedder,
                )
                for v in new
            ],
        )
        self._bump_using(tenant, [v.term for v in new])

    def _bump_using(self, tenant: str, words: Sequence[str]) -> None:
        for start in range(0, len(words), 500):
            chunk = list(words[start : start + 500])
            self._db.execute(
                "UPDATE search_generations SET generation = generation + 1 "
                "WHERE tenant_id = ? AND conversation_id IN (SELECT DISTINCT conversation_id "
                f"FROM conversation_terms WHERE tenant_id = ? AND term IN ({_in(chunk)}))",
                (tenant, tenant, *chunk),
            )

    # --- memories -------------------------------------------------------------------------------

    def set_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        # only for memories that still exist: one deleted meanwhile must not come back as a vector
        self._db.executemany(
            "INSERT OR REPLACE INTO memory_vectors (tenant_id, memory_id, user_id, embedder, "
            "vector) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE "
            f"tenant_id = ? AND id = ? AND user_id = ?) AND {may_serve('?', '?')}",
            [
                (
                    tenant,
                    v.memory_id,
                    user,
                    embedder,
                    to_blob(v.vector),
                    tenant,
                    v.memory_id,
                    user,
                    tenant,
                    embedder,
                )
                for v in vectors
            ],
        )

    def memory_vector_ids(self, tenant: str, user: str) -> list[str]:
        rows = self._db.execute(
            "SELECT memory_id FROM memory_vectors WHERE tenant_id = ? AND user_id = ? "
            "ORDER BY memory_id",
            (tenant, user),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def unembedded_turns(self, tenant: str, conversation_id: str, embedder: str) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM message_index WHERE tenant_id = ? AND conversation_id = ? "
            "AND (vector IS NULL OR embedder IS NOT ?)",
            (tenant, conversation_id, embedder),
        ).fetchone()
        return int(row[0])

    def unembedded_memories(self, tenant: str, user: str, embedder: str) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM memories m WHERE m.tenant_id = ? AND m.user_id = ? "
            "AND m.status = 'confirmed' AND NOT EXISTS (SELECT 1 FROM memory_vectors v "
            "WHERE v.tenant_id = m.tenant_id AND v.memory_id = m.id AND v.embedder = ? "
            "AND v.vector IS NOT NULL)",
            (tenant, user, embedder),
        ).fetchone()
        return int(row[0])

    def missing_memory_vectors(self, embedder: str, limit: int) -> list[MissingMemoryVector]:
        rows = self._db.execute(
            "SELECT m.tenant_id, m.user_id, m.id, m.text FROM memories m "
            "LEFT JOIN memory_vectors v ON v.tenant_id = m.tenant_id AND v.memory_id = m.id "
            "WHERE (v.vector IS NULL OR v.embedder IS NOT ?) AND m.status != 'rejected' "
            f"AND {may_serve('m.tenant_id', '?')} LIMIT ?",
            (embedder, embedder, limit),
        ).fetchall()
        return [MissingMemoryVector(r[0], r[1], r[2], r[3]) for r in rows]
