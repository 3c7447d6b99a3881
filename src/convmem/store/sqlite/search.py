"""SQLite primitives for search: the message index (FTS5 + vectors), vocabularies, memory vectors.

Full-text queries arrive as terms, never as FTS5 syntax: this module quotes them. Every query
carries its owner twice — as a token the FTS5 expression intersects with (so SQLite reads one
conversation's postings, not every user's) and as ordinary SQL conditions on tenant, user and
conversation (so nothing else can ever be returned, whatever the tokens do).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from convmem.errors import InvalidInput
from convmem.model.memory import MemoryRecord
from convmem.retrieval.lexical import MARK_CLOSE, MARK_OPEN, bm25_scores, or_query, quote
from convmem.store.ranking import MemoryHitRow, MessageHitRow, VectorRow
from convmem.store.search_index import (
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
from convmem.store.sqlite.memories import _PREFIXED, _memory, utc_text
from convmem.store.sqlite.vectors import from_blob, to_blob

# Column weights for (body, ctx): a neighbour's words count half as much as the turn's own
# (measured on LoCoMo: 0.5 beat 0.3 and 0.7).
_COLUMN_WEIGHTS = (1.0, 0.5)
# Most matching turns scored per query: every one for a conversation of a few thousand turns.
_MAX_CANDIDATES = 5000
_MEMORY_BM25 = "bm25(memories_fts, 0.0, 1.0, 0.5)"


def conversation_token(tenant: str, conversation_id: str) -> str:
    return "c" + tenant.encode().hex() + "x" + conversation_id.encode().hex()


def user_token(tenant: str, user: str) -> str:
    return "u" + tenant.encode().hex() + "x" + user.encode().hex()


def memory_owner_token(tenant: str, user: str) -> str:
    # the same text as migration m021's SQL: 'm' || hex(tenant_id) || 'x' || hex(user_id)
    return "m" + tenant.encode().hex().upper() + "x" + user.encode().hex().upper()


def _in(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


class SearchTxnMixin:
    _db: sqlite3.Connection

    # --- the message index ----------------------------------------------------------------------

    def index_message(self, tenant: str, user: str, entry: IndexEntry) -> None:
        scope = f"{conversation_token(tenant, entry.conversation_id)} {user_token(tenant, user)}"
        self._db.execute(
            "INSERT OR REPLACE INTO message_index (tenant_id, message_id, user_id, "
            "conversation_id, depth, created_at, speaker, session, scope, body, ctx, embedder, "
            "vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tenant, entry.message_id, user, entry.conversation_id, entry.depth,
                utc_text(entry.created_at), entry.speaker, entry.session, scope, entry.body,
                entry.ctx, entry.embedder,
                None if entry.vector is None else to_blob(entry.vector),
            ),
        )  # fmt: skip

    def set_index_context(self, tenant: str, message_id: str, ctx: str) -> None:
        self._db.execute(
            "UPDATE message_index SET ctx = ? WHERE tenant_id = ? AND message_id = ? "
            "AND ctx IS NOT ?",
            (ctx, tenant, message_id, ctx),
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

    def search_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        *,
        limit: int,
        max_depth: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[MessageHitRow]:
        """Messages of one conversation matching any of ``terms``, best BM25 first (the
        conversation's own statistics: see ``bm25_scores``)."""
        words = or_query(terms, columns=("body", "ctx"))
        if words is None or limit < 1:
            return []
        match = f"scope : {quote(conversation_token(tenant, conversation_id))} AND {words}"
        sql = (
            "SELECT i.message_id, i.speaker, "
            f"highlight(message_fts, 1, '{MARK_OPEN}', '{MARK_CLOSE}'), "
            f"highlight(message_fts, 2, '{MARK_OPEN}', '{MARK_CLOSE}') FROM message_fts "
            "JOIN message_index i ON i.id = message_fts.rowid "
            "WHERE message_fts MATCH ? AND i.tenant_id = ? AND i.user_id = ? "
            "AND i.conversation_id = ?"
        )
        params: list[Any] = [match, tenant, user, conversation_id]
        sql, params = _window(sql, params, max_depth, since, until)
        # newest first, so a very long conversation is scored over its recent matches
        sql += " ORDER BY message_fts.rowid DESC LIMIT ?"
        rows = self._db.execute(sql, (*params, _MAX_CANDIDATES)).fetchall()
        if not rows:
            return []
        # the collection's size for IDF: the deepest turn's depth counts the turns of the longest
        # branch, one index seek where count(*) would read the whole conversation's entries
        total = self._db.execute(
            "SELECT max(depth) + 1 FROM message_index WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchone()[0]
        scores = bm25_scores(
            [(r[0], (r[2], r[3])) for r in rows], int(total), _COLUMN_WEIGHTS, terms=terms
        )
        speaker = {r[0]: r[1] for r in rows}
        ranked = sorted(scores, key=lambda m: -scores[m])[:limit]
        return [MessageHitRow(m, speaker[m], scores[m]) for m in ranked]

    def message_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str
    ) -> list[VectorRow]:
        rows = self._db.execute(
            "SELECT message_id, speaker, depth, created_at, vector FROM message_index "
            "WHERE tenant_id = ? AND conversation_id = ? AND user_id = ? AND embedder = ? "
            "AND vector IS NOT NULL ORDER BY id",
            (tenant, conversation_id, user, embedder),
        ).fetchall()
        return [VectorRow(r[0], r[1], r[2], datetime.fromisoformat(r[3]), r[4]) for r in rows]

    def search_generation(self, tenant: str, conversation_id: str) -> int | None:
        row = self._db.execute(
            "SELECT generation FROM search_generations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def _bump(self, tenant: str, conversation_ids: Sequence[str]) -> None:
        self._db.executemany(
            "UPDATE search_generations SET generation = generation + 1 "
            "WHERE tenant_id = ? AND conversation_id = ?",
            [(tenant, c) for c in set(conversation_ids)],
        )

    def missing_message_vectors(self, embedder: str, limit: int) -> list[MissingMessageVector]:
        rows = self._db.execute(
            "SELECT tenant_id, message_id, body FROM message_index "
            "WHERE embedder IS NOT ? OR vector IS NULL ORDER BY id LIMIT ?",
            (embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2]) for r in rows]

    def set_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        self._db.executemany(
            "UPDATE message_index SET embedder = ?, vector = ? "
            "WHERE tenant_id = ? AND message_id = ?",
            [(embedder, to_blob(v.vector), tenant, v.message_id) for v in vectors],
        )

    def indexed_bodies(self, tenant: str, conversation_id: str) -> list[IndexedBody]:
        rows = self._db.execute(
            "SELECT speaker, body FROM message_index WHERE tenant_id = ? AND conversation_id = ?",
            (tenant, conversation_id),
        ).fetchall()
        return [IndexedBody(r[0], r[1]) for r in rows]

    def on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> set[str]:
        """The candidates that are ``start_id`` or its ancestors (walks up to ``min_depth``)."""
        if not candidate_ids:
            return set()
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
        wanted = set(candidate_ids)
        return {r[0] for r in rows if r[0] in wanted}

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

    def term_vectors(
        self, tenant: str, conversation_id: str, embedder: str
    ) -> list[tuple[str, bytes]]:
        """The conversation's words with their vectors from ``embedder``."""
        rows = self._db.execute(
            "SELECT t.term, v.vector FROM conversation_terms t JOIN term_vectors v "
            "ON v.tenant_id = t.tenant_id AND v.embedder = ? AND v.term = t.term "
            "WHERE t.tenant_id = ? AND t.conversation_id = ? AND t.speaker = 0 ORDER BY t.term",
            (embedder, tenant, conversation_id),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

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
            "WHERE v.tenant_id = t.tenant_id AND v.embedder = ? AND v.term = t.term) LIMIT ?",
            (embedder, limit),
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
            "WHERE tenant_id = ? AND term = ?)",
            [(tenant, embedder, v.term, to_blob(v.vector), tenant, v.term) for v in new],
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

    def search_memory_terms(
        self,
        tenant: str,
        user: str,
        terms: Sequence[str],
        *,
        scopes: Sequence[str],
        now: datetime,
        limit: int,
    ) -> list[MemoryHitRow]:
        """Current, confirmed, unexpired, unconflicted memories of the principal matching any of
        ``terms``, best first. The principal's filters are in the same query as the ranking."""
        words = or_query(terms, columns=("text", "subject_key"))
        if words is None or not scopes or limit < 1:
            return []
        match = f"owner : {quote(memory_owner_token(tenant, user))} AND {words}"
        rows = self._db.execute(
            f"SELECT {_PREFIXED}, {_MEMORY_BM25} AS rank FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.tenant_id = ? AND m.user_id = ? "
            "AND m.status = 'confirmed' AND m.conflicts_with_id IS NULL "
            "AND (m.expires_at IS NULL OR m.expires_at > ?) "
            f"AND m.scope IN ({_in(scopes)}) ORDER BY rank LIMIT ?",
            (match, tenant, user, utc_text(now), *scopes, limit),
        ).fetchall()
        return [MemoryHitRow(_memory(row), -float(row[17])) for row in rows]

    def memory_vectors(
        self, tenant: str, user: str, embedder: str, *, scopes: Sequence[str], now: datetime
    ) -> list[tuple[MemoryRecord, bytes]]:
        """The principal's current memories that have a vector from ``embedder``, filtered as
        ``search_memory_terms`` filters."""
        if not scopes:
            return []
        rows = self._db.execute(
            f"SELECT {_PREFIXED}, v.vector FROM memory_vectors v JOIN memories m "
            "ON m.tenant_id = v.tenant_id AND m.id = v.memory_id "
            "WHERE v.tenant_id = ? AND v.user_id = ? AND v.embedder = ? AND m.user_id = ? "
            "AND m.status = 'confirmed' AND m.conflicts_with_id IS NULL "
            "AND (m.expires_at IS NULL OR m.expires_at > ?) "
            f"AND m.scope IN ({_in(scopes)})",
            (tenant, user, embedder, user, utc_text(now), *scopes),
        ).fetchall()
        return [(_memory(row), row[17]) for row in rows]

    def set_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        # only for memories that still exist: one deleted meanwhile must not come back as a vector
        self._db.executemany(
            "INSERT OR REPLACE INTO memory_vectors (tenant_id, memory_id, user_id, embedder, "
            "vector) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE "
            "tenant_id = ? AND id = ? AND user_id = ?)",
            [
                (tenant, v.memory_id, user, embedder, to_blob(v.vector), tenant, v.memory_id, user)
                for v in vectors
            ],
        )

    def missing_memory_vectors(self, embedder: str, limit: int) -> list[MissingMemoryVector]:
        rows = self._db.execute(
            "SELECT m.tenant_id, m.user_id, m.id, m.text FROM memories m "
            "LEFT JOIN memory_vectors v ON v.tenant_id = m.tenant_id AND v.memory_id = m.id "
            "WHERE (v.vector IS NULL OR v.embedder IS NOT ?) AND m.status != 'rejected' LIMIT ?",
            (embedder, limit),
        ).fetchall()
        return [MissingMemoryVector(r[0], r[1], r[2], r[3]) for r in rows]


def _window(
    sql: str,
    params: list[Any],
    max_depth: int | None,
    since: datetime | None,
    until: datetime | None,
) -> tuple[str, list[Any]]:
    if max_depth is not None:
        sql += " AND i.depth < ?"
        params.append(max_depth)
    if since is not None:
        sql += " AND i.created_at >= ?"
        params.append(utc_text(since))
    if until is not None:
        sql += " AND i.created_at < ?"
        params.append(utc_text(until))
    return sql, params
