"""PostgreSQL primitives for search: the message index (tsvector + halfvec), vocabularies, memory
vectors.

Full-text queries arrive as terms and each term goes through ``plainto_tsquery``, which reads its
argument as plain text: operators, quotes and parentheses in user text are never query syntax.
The terms' queries are intersected with the owner's lexeme (one user's memories; for a
conversation's turns, one recency bucket of the conversation at a time, newest first: see
``fulltext.RECENCY_BUCKET``), so the GIN index reads one owner's postings; tenant, user and
conversation are also ordinary SQL conditions, so nothing else can ever be returned, whatever
the lexemes do.

Ranking is BM25-shaped and computed in the query, over the owner's matching rows only: each
term's ``ts_rank`` (the turn's own words weigh 1, its neighbours' 0.5; length-normalised) times
the term's IDF among the conversation's turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from convmem.errors import InvalidInput
from convmem.store.embedder_switch import may_build, may_serve
from convmem.store.index_form import stored_index_form
from convmem.store.postgres.fulltext import RECENCY_BUCKET, TS_CONFIG
from convmem.store.postgres.rows import TxnBase, float32_row, halfvec
from convmem.store.ranking import (
    DOCUMENT_FREQUENCY_CAP,
    TERM_CANDIDATES,
    MessageHitRow,
    Window,
)
from convmem.store.search_index import (
    EmbeddedTurn,
    IndexedBody,
    IndexedRow,
    IndexEntry,
    MessageVector,
    MissingMessageVector,
    MissingTermVector,
    TermVector,
    UnindexedMessage,
    Vector,
)

# ts_rank's weights for {D, C, B, A}: the owner lexeme (D) counts nothing, a neighbour's words
# (B) half of the turn's own (A); the same ratio as the SQLite backend's bm25 column weights.
TS_WEIGHTS = "'{0, 0, 0.5, 1}'::real[]"


def conversation_lexeme(tenant: str, conversation_id: str) -> str:
    """The lexeme a conversation's index rows carry (hex: no stemming, no stop word)."""
    return "c" + tenant.encode().hex() + "x" + conversation_id.encode().hex()


def owner_query(lexeme: str) -> str:
    # hex digits and two letters: safe inside a tsquery literal
    return f"'{lexeme}'"


# The terms' OR-ed query as text tsquery can parse back: plainto_tsquery's output is quoted
# lexemes joined by operators, and terms that are only stop words (empty queries) are left out.
TERMS_QUERY = (
    "(SELECT string_agg('(' || q::text || ')', ' | ') FROM "
    f"(SELECT plainto_tsquery('{TS_CONFIG}', term) AS q FROM unnest(%s::text[]) AS term) s "
    "WHERE numnode(q) > 0)"
)


# FROM … WHERE of a conversation's vocabulary words with their vectors, for its owner only and
# without its speakers' names (a name's vector would widen a query towards whoever spoke).
# Parameters: embedder, tenant (twice), conversation, tenant (twice), conversation, user.
_VOCABULARY = (
    "FROM conversation_terms t JOIN term_vectors v ON v.tenant_id = t.tenant_id "
    "AND v.embedder = %s AND v.term = t.term WHERE t.tenant_id = %s AND v.tenant_id = %s "
    "AND t.conversation_id = %s AND NOT t.speaker AND NOT EXISTS (SELECT 1 FROM "
    "conversation_terms s WHERE s.tenant_id = %s AND s.speaker AND s.conversation_id = "
    "t.conversation_id AND lower(s.term) = t.term) AND EXISTS (SELECT 1 FROM conversations c "
    "WHERE c.tenant_id = %s AND c.id = %s AND c.user_id = %s)"
)


class SearchTxnMixin(TxnBase):
    # --- the message index ----------------------------------------------------------------------

    def index_messages(self, tenant: str, user: str, entries: Sequence[IndexEntry]) -> None:
        if not entries:
            return
        self._indexed_ahead = None  # what was read ahead may be what this rewrites
        self._db.cursor().executemany(
            "INSERT INTO message_index (tenant_id, message_id, user_id, conversation_id, depth, "
            "created_at, speaker, session, scope_lexeme, body, ctx, body_form, ctx_form, "
            "embedder, vector) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (tenant_id, message_id) DO UPDATE SET depth = EXCLUDED.depth, "
            "created_at = EXCLUDED.created_at, speaker = EXCLUDED.speaker, "
            "session = EXCLUDED.session, body = EXCLUDED.body, ctx = EXCLUDED.ctx, "
            "body_form = EXCLUDED.body_form, ctx_form = EXCLUDED.ctx_form, "
            "embedder = EXCLUDED.embedder, vector = EXCLUDED.vector",
            [
                (
                    tenant, entry.message_id, user, entry.conversation_id, entry.depth,
                    entry.created_at, entry.speaker, entry.session,
                    conversation_lexeme(tenant, entry.conversation_id), entry.body, entry.ctx,
                    stored_index_form(entry.body), stored_index_form(entry.ctx), entry.embedder,
                    None if entry.vector is None else halfvec(entry.vector),
                )
                for entry in entries
            ],
        )  # fmt: skip
        self._db.execute(
            "INSERT INTO search_generations (tenant_id, conversation_id, generation) "
            "SELECT %s, c.id, 1 FROM unnest(%s::text[]) AS c(id) "
            "ON CONFLICT (tenant_id, conversation_id) "
            "DO UPDATE SET generation = search_generations.generation + 1",
            (tenant, sorted({entry.conversation_id for entry in entries})),
        )

    def set_index_context(self, tenant: str, message_id: str, ctx: str) -> None:
        self._indexed_ahead = None
        self._db.execute(
            "UPDATE message_index SET ctx = %s, ctx_form = %s "
            "WHERE tenant_id = %s AND message_id = %s AND ctx IS DISTINCT FROM %s",
            (ctx, stored_index_form(ctx), tenant, message_id, ctx),
        )

    def forget_indexed(self, tenant: str, message_ids: Sequence[str]) -> None:
        """Remove deleted messages' index rows (their vectors with them)."""
        rows = self._db.execute(
            "DELETE FROM message_index WHERE tenant_id = %s AND message_id = ANY(%s) "
            "RETURNING conversation_id",
            (tenant, list(message_ids)),
        ).fetchall()
        self._bump(tenant, [r[0] for r in rows])

    def indexed_rows(self, tenant: str, message_ids: Sequence[str]) -> dict[str, IndexedRow]:
        if not message_ids:
            return {}
        ahead, self._indexed_ahead = self._indexed_ahead, None
        if ahead is not None and ahead[0].issuperset(message_ids):  # read with the append's state
            rows = ahead[1].fetchall()
        else:
            rows = self._send_indexed_rows(tenant, "%s", (list(message_ids),)).fetchall()
        wanted = set(message_ids)
        return {
            r[0]: IndexedRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6])
            for r in rows
            if r[0] in wanted
        }

    def _send_indexed_rows(
        self, tenant: str, ids: str, params: tuple[Any, ...]
    ) -> psycopg.Cursor[Any]:
        """The index rows of the messages ``ids`` (an SQL expression of an id array, with
        ``params``), queued."""
        return self._db.execute(
            "SELECT i.message_id, i.speaker, i.session, i.created_at, i.body, i.depth, "
            "m.parent_id FROM message_index i JOIN messages m "
            "ON m.tenant_id = i.tenant_id AND m.id = i.message_id "
            f"WHERE i.tenant_id = %s AND m.tenant_id = %s AND i.message_id = ANY({ids})",
            (tenant, tenant, *params),
        )

    def _read_indexed_ahead(
        self, tenant: str, user: str, which: str, params: tuple[Any, ...]
    ) -> psycopg.Cursor[Any]:
        """Queue the index rows of the message ``which`` (an SQL expression of its id, with
        ``params``) and of its parent: what indexing a message appended under it reads
        (``domain.indexing.write_turn``), sent with the append's state so it costs no round
        trip of its own. ``_expect_indexed_ahead`` names the ids once they are known."""
        return self._send_indexed_rows(
            tenant,
            "((SELECT ARRAY[p.id, p.parent_id] FROM messages p "
            f"WHERE p.tenant_id = %s AND p.id = {which} AND p.user_id = %s)::text[])",
            (tenant, *params, user),
        )

    def _expect_indexed_ahead(self, sent: psycopg.Cursor[Any], ids: Sequence[str | None]) -> None:
        """The rows ``sent`` (``_read_indexed_ahead``) answer the next ``indexed_rows`` asking for
        any of ``ids``, unless the index is written before."""
        self._indexed_ahead = (frozenset(i for i in ids if i is not None), sent)

    def latest_indexed_child(self, tenant: str, conversation_id: str, parent_id: str) -> str | None:
        row = self._db.execute(
            "SELECT i.message_id FROM messages m JOIN message_index i "
            "ON i.tenant_id = m.tenant_id AND i.message_id = m.id "
            "WHERE m.tenant_id = %s AND i.tenant_id = %s AND m.conversation_id = %s "
            "AND m.parent_id = %s ORDER BY m.seq DESC LIMIT 1",
            (tenant, tenant, conversation_id, parent_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def unindexed_messages(self, after: str | None, limit: int) -> list[UnindexedMessage]:
        # a cheap pre-filter (btrim strips spaces only): the caller still skips what
        # ``indexable`` refuses, and the seq cursor makes sure it is not seen twice
        try:
            position = 0 if after is None else int(after)
        except ValueError:
            raise InvalidInput("not a cursor unindexed_messages returned") from None
        rows = self._db.execute(
            "SELECT m.seq, m.tenant_id, m.user_id, m.id FROM messages m WHERE m.seq > %s "
            "AND NOT EXISTS (SELECT 1 FROM message_index i WHERE i.tenant_id = m.tenant_id "
            "AND i.message_id = m.id) AND m.role <> 'tool' AND btrim(m.content) <> '' "
            "ORDER BY m.seq LIMIT %s",
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
        window: Window,
        limit: int,
    ) -> list[MessageHitRow]:
        """Messages of one conversation matching any of ``terms``, best first."""
        return self._ranked(tenant, user, conversation_id, [], terms, window, 0, limit)[1]

    def search_messages_widened(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        terms: Sequence[str],
        extra: Sequence[str],
        *,
        window: Window,
        limit: int,
    ) -> tuple[list[MessageHitRow], list[MessageHitRow]]:
        """One statement: each term's weight is its own ``ts_rank`` and IDF, so the narrower
        ranking is the wider query's matches scored by the narrower terms only — exactly
        ``search_messages``'s (below ``TERM_CANDIDATES`` matches a term) — and a round trip
        less."""
        wider = [*terms, *extra]
        return self._ranked(tenant, user, conversation_id, terms, wider, window, limit, limit)

    def _ranked(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        narrow: Sequence[str],
        terms: Sequence[str],
        window: Window,
        narrow_limit: int,
        limit: int,
    ) -> tuple[list[MessageHitRow], list[MessageHitRow]]:
        """The turns matching any of ``terms`` ranked by all of them, and those matching any of
        ``narrow`` (a subset) ranked by those alone; at most ``narrow_limit`` / ``limit``."""
        wanted = [t for t in terms if t]
        if not wanted or limit < 1:
            return [], []
        filters, params = _window(window)
        deepest, deepest_params = _window(Window(max_depth=window.max_depth))
        rows = self._db.execute(
            f"""
            WITH q AS (
                SELECT term, plainto_tsquery('{TS_CONFIG}', term) AS tq,
                    term = ANY(%s::text[]) AS narrow
                FROM unnest(%s::text[]) AS term
            ),
            -- the deepest turn the window holds and its recency bucket (one index seek)
            top AS (
                SELECT max(i.depth) AS d, max(i.depth) / {RECENCY_BUCKET} AS b
                FROM message_index i WHERE i.tenant_id = %s AND i.conversation_id = %s{deepest}
            ),
            -- the buckets in groups, newest first, each group twice the one before: the
            -- newest bucket, the two before it, the four before those …
            groups AS MATERIALIZED (
                SELECT g.n, (SELECT string_agg(quote_literal(%s || 'z' || k), ' | ')
                    FROM generate_series(greatest(0, t.b - (2::bigint << g.n) + 2),
                        t.b - (1::bigint << g.n) + 1) AS k)::tsquery AS buckets
                FROM top t CROSS JOIN generate_series(0, 40) AS g(n)
                WHERE t.b - (1::bigint << g.n) + 1 >= 0
                ORDER BY g.n
            ),
            -- each term's newest matches, at most TERM_CANDIDATES (convmem.store.ranking): the
            -- groups are read in order and the reading stops once that many are held, so the
            -- work is bounded by the terms, not by the conversation's length or a term's
            -- frequency in it (groups are disjoint and newest first, and each is sorted: what
            -- the first groups yield is the newest matches of all)
            listed AS (
                SELECT q.term, m.message_id, m.depth FROM q CROSS JOIN LATERAL (
                    SELECT x.message_id, x.depth FROM groups g CROSS JOIN LATERAL (
                        SELECT i.message_id, i.depth FROM message_index i
                        WHERE i.tenant_id = %s AND i.user_id = %s AND i.conversation_id = %s
                        AND i.tsv @@ (g.buckets && q.tq){filters}
                        ORDER BY i.depth DESC, i.seq DESC LIMIT {TERM_CANDIDATES}
                    ) x LIMIT {TERM_CANDIDATES}
                ) m
                WHERE numnode(q.tq) > 0
            ),
            -- the candidates' rows, looked up one by one by key (with IN, a table holding one
            -- tenant's rows, a self-hosted one's, was read whole to hash-join them)
            c AS MATERIALIZED (
                SELECT i.message_id, i.speaker, i.depth, i.created_at, i.tsv
                FROM (SELECT DISTINCT message_id FROM listed) l CROSS JOIN LATERAL (
                    -- the document read out of TOAST once here (concatenating nothing copies
                    -- it), not once per term by each match test and rank below
                    SELECT i.message_id, i.speaker, i.depth, i.created_at,
                        i.tsv || ''::tsvector AS tsv
                    FROM message_index i WHERE i.tenant_id = %s AND i.message_id = l.message_id
                    LIMIT 1  -- the key is unique; a limit keeps the planner from flattening it
                ) i
            ),
            total AS (
                -- the deepest turn's depth counts the turns of the longest branch: one index
                -- seek where count(*) would read the whole conversation's rows
                SELECT coalesce(max(depth) + 1, 1) AS n FROM message_index
                WHERE tenant_id = %s AND conversation_id = %s
            ),
            -- a term's document frequency: its matches, when all were listed; else estimated
            -- from how densely its newest matches lie (those listed, over the depths from the
            -- window's deepest turn down to the oldest listed), up to DOCUMENT_FREQUENCY_CAP
            df AS MATERIALIZED (
                SELECT q.term, CASE WHEN coalesce(l.n, 0) < {TERM_CANDIDATES}
                    THEN coalesce(l.n, 0)::float8
                    ELSE least({DOCUMENT_FREQUENCY_CAP}::float8, greatest(l.n::float8,
                        l.n::float8 * t.n / greatest(1, top.d - l.oldest + 1)))
                    END AS n
                FROM q LEFT JOIN (SELECT term, count(*) AS n, min(depth) AS oldest
                    FROM listed GROUP BY term) l USING (term)
                CROSS JOIN total t CROSS JOIN top
                WHERE numnode(q.tq) > 0
            ),
            hits AS (
                SELECT c.message_id, c.speaker, c.depth, c.created_at, q.term, q.narrow,
                    ts_rank({TS_WEIGHTS}, c.tsv, q.tq, 1) AS tf
                FROM c JOIN q ON numnode(q.tq) > 0 AND c.tsv @@ q.tq
            ),
            scored AS (
                SELECT h.message_id, min(h.speaker) AS speaker, min(h.depth) AS depth,
                    min(h.created_at) AS created_at, sum(w.idf * h.tf) AS score,
                    sum(w.idf * h.tf) FILTER (WHERE h.narrow) AS narrow_score
                FROM hits h JOIN df d USING (term) CROSS JOIN total t
                CROSS JOIN LATERAL (SELECT greatest(1e-6,
                    ln((greatest(t.n, d.n) - d.n + 0.5) / (d.n + 0.5))) AS idf) w
                GROUP BY h.message_id
            )
            -- each ranking's order travels as a number: UNION ALL promises none of its own
            (SELECT true, message_id, speaker, depth, narrow_score, created_at,
                row_number() OVER (ORDER BY narrow_score DESC, message_id) AS n
             FROM scored WHERE narrow_score IS NOT NULL ORDER BY n LIMIT %s)
            UNION ALL
            (SELECT false, message_id, speaker, depth, score, created_at,
                row_number() OVER (ORDER BY score DESC, message_id) AS n
             FROM scored ORDER BY n LIMIT %s)
            """,
            (
                list(narrow), wanted, tenant, conversation_id, *deepest_params,
                conversation_lexeme(tenant, conversation_id), tenant, user, conversation_id,
                *params, tenant, tenant, conversation_id, narrow_limit, limit,
            ),
        ).fetchall()  # fmt: skip
        found: tuple[list[MessageHitRow], list[MessageHitRow]] = ([], [])
        for r in sorted(rows, key=lambda r: (not r[0], r[6])):
            found[0 if r[0] else 1].append(MessageHitRow(r[1], r[2], r[3], float(r[4]), r[5]))
        return found

    def _lock_conversations_of(self, which: str, params: Sequence[Any]) -> None:
        """Before a vector write: lock the conversations ``which`` (a query of conversation ids
        of the tenant, the first parameter) names, in id order, as every writer locks them —
        an append its own, a delete all it removes. A vector writer then never holds a
        conversation's index or generation rows while it waits for its lock (the deadlock an
        append and the background filler met), and one whose conversation was deleted
        meanwhile finds nothing to write."""
        self._db.execute(
            f"SELECT 1 FROM conversations WHERE tenant_id = %s AND id IN ({which}) "
            "ORDER BY id FOR UPDATE",
            params,
        )

    def _bump(self, tenant: str, conversation_ids: Sequence[str]) -> None:
        self._indexed_ahead = None  # the index changed: what was read ahead may be stale
        if conversation_ids:
            self._db.execute(
                "UPDATE search_generations SET generation = generation + 1 "
                "WHERE tenant_id = %s AND conversation_id = ANY(%s)",
                (tenant, sorted(set(conversation_ids))),
            )

    def missing_message_vectors(self, embedder: str, limit: int) -> list[MissingMessageVector]:
        rows = self._db.execute(
            "SELECT tenant_id, message_id, speaker, body FROM message_index "
            "WHERE (embedder IS DISTINCT FROM %s OR vector IS NULL) "
            f"AND {may_serve('message_index.tenant_id', '%s')} ORDER BY seq LIMIT %s",
            (embedder, embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2], r[3]) for r in rows]

    def unembedded_turns(self, tenant: str, conversation_id: str, embedder: str) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM message_index WHERE tenant_id = %s AND conversation_id = %s "
            "AND (vector IS NULL OR embedder IS DISTINCT FROM %s)",
            (tenant, conversation_id, embedder),
        ).fetchone()
        return int(row[0]) if row else 0

    def embedded_message_vectors(self, embedder: str, after: int, limit: int) -> list[EmbeddedTurn]:
        rows = self._db.execute(
            "SELECT tenant_id, message_id, speaker, body, seq FROM message_index "
            "WHERE embedder = %s AND vector IS NOT NULL AND seq > %s ORDER BY seq LIMIT %s",
            (embedder, after, limit),
        ).fetchall()
        return [EmbeddedTurn(r[0], r[1], r[2], r[3], int(r[4])) for r in rows]

    def set_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        if not vectors:
            return
        ids = [v.message_id for v in vectors]
        self._lock_conversations_of(
            "SELECT conversation_id FROM message_index WHERE tenant_id = %s "
            "AND message_id = ANY(%s)",
            (tenant, tenant, ids),
        )
        rows = self._db.execute(
            "UPDATE message_index i SET embedder = %s, vector = v.vector FROM "
            "(SELECT unnest(%s::text[]) AS message_id, unnest(%s::halfvec[]) AS vector) v "
            "WHERE i.tenant_id = %s AND i.message_id = v.message_id "
            f"AND {may_serve('%s', '%s')} RETURNING i.conversation_id",
            (embedder, ids, [halfvec(v.vector) for v in vectors], tenant, tenant, embedder),
        ).fetchall()
        self._bump(tenant, [r[0] for r in rows])

    def indexed_bodies(self, tenant: str, conversation_id: str) -> list[IndexedBody]:
        rows = self._db.execute(
            "SELECT speaker, body FROM message_index WHERE tenant_id = %s AND conversation_id = %s",
            (tenant, conversation_id),
        ).fetchall()
        return [IndexedBody(r[0], r[1]) for r in rows]

    def on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> set[str]:
        """The candidates that are ``start_id`` or its ancestors, down to ``min_depth``: those
        alone at their depth at once, the others by a walk up from ``start_id`` (see the SQLite
        store's ``on_branch``)."""
        if not candidate_ids:
            return set()
        return self._on_branch_of(
            tenant, start_id, self._send_on_branch(tenant, start_id, candidate_ids, min_depth)
        )

    def _send_on_branch(
        self, tenant: str, start_id: str, candidate_ids: Sequence[str], min_depth: int
    ) -> psycopg.Cursor[Any]:
        # one statement: the candidates within the depths, each with whether its depth forks
        return self._db.execute(
            "WITH s AS (SELECT conversation_id, depth FROM messages "
            "WHERE tenant_id = %s AND id = %s) "
            "SELECT m.id, m.depth, EXISTS (SELECT 1 FROM messages x "
            "WHERE x.tenant_id = %s AND x.conversation_id = s.conversation_id "
            "AND x.depth = m.depth AND x.id <> m.id) "
            "FROM messages m JOIN s ON m.conversation_id = s.conversation_id "
            "WHERE m.tenant_id = %s AND m.id = ANY(%s) AND m.depth >= %s AND m.depth <= s.depth",
            (tenant, start_id, tenant, tenant, list(candidate_ids), min_depth),
        )

    def _on_branch_of(self, tenant: str, start_id: str, sent: psycopg.Cursor[Any]) -> set[str]:
        rows = sent.fetchall()
        depths = {r[0]: int(r[1]) for r in rows}
        shared = {int(r[1]) for r in rows if r[2]}
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
                SELECT id, parent_id, depth FROM messages WHERE tenant_id = %s AND id = %s
                UNION ALL
                SELECT m.id, m.parent_id, m.depth FROM up
                JOIN messages m ON m.tenant_id = %s AND m.id = up.parent_id
                WHERE up.depth > %s
            )
            SELECT id FROM up
            """,
            (tenant, start_id, tenant, min_depth),
        ).fetchall()
        return {r[0] for r in rows}

    def nearest_messages(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        embedder: str,
        vector: Vector,
        *,
        window: Window,
        limit: int,
    ) -> list[MessageHitRow]:
        """Exact cosine over the conversation's rows, in the database: the scope (one
        conversation) is a B-tree range, a few thousand rows at most, where an approximate index
        over every tenant's vectors would have to filter afterwards."""
        if limit < 1:
            return []
        filters, params = _window(window)
        query = halfvec(vector)
        rows = self._db.execute(
            "SELECT i.message_id, i.speaker, i.depth, 1 - (i.vector <=> %s), i.created_at "
            "FROM message_index i WHERE i.tenant_id = %s AND i.conversation_id = %s "
            f"AND i.user_id = %s AND i.embedder = %s AND i.vector IS NOT NULL{filters} "
            "ORDER BY i.vector <=> %s, i.seq LIMIT %s",
            (query, tenant, conversation_id, user, embedder, *params, query, limit),
        ).fetchall()
        return [MessageHitRow(r[0], r[1], r[2], float(r[3]), r[4]) for r in rows]

    # --- a conversation's vocabulary ------------------------------------------------------------

    def add_terms(
        self, tenant: str, conversation_id: str, words: Sequence[str], speakers: Sequence[str]
    ) -> None:
        flags = dict.fromkeys(words, False) | dict.fromkeys(speakers, True)
        if not flags:
            return
        ordered = sorted(flags)  # one order for every writer: concurrent upserts cannot deadlock
        self._db.execute(
            "INSERT INTO conversation_terms (tenant_id, conversation_id, term, speaker) "
            "SELECT %s, %s, t.term, t.speaker FROM unnest(%s::text[], %s::boolean[]) "
            "AS t(term, speaker) ON CONFLICT (tenant_id, conversation_id, term) DO UPDATE "
            "SET speaker = conversation_terms.speaker OR EXCLUDED.speaker",
            (tenant, conversation_id, ordered, [flags[t] for t in ordered]),
        )
        # no generation bump: terms arrive with a new index row, whose insert bumped it

    def retain_terms(
        self, tenant: str, conversation_id: str, words: set[str], speakers: set[str]
    ) -> None:
        """Forget the words and speakers no remaining message of the conversation has."""
        rows = self._db.execute(
            "SELECT term, speaker FROM conversation_terms "
            "WHERE tenant_id = %s AND conversation_id = %s",
            (tenant, conversation_id),
        ).fetchall()
        doomed = sorted(r[0] for r in rows if r[0] not in (speakers if r[1] else words))
        if not doomed:
            return
        self._db.execute(
            "DELETE FROM conversation_terms WHERE tenant_id = %s AND conversation_id = %s "
            "AND term = ANY(%s)",
            (tenant, conversation_id, doomed),
        )
        self._forget_unused_term_vectors(tenant, doomed)
        self._bump(tenant, [conversation_id])

    def conversation_speakers(self, tenant: str, conversation_id: str) -> list[str]:
        return list(self._snapshot_read(*self._speakers_read(tenant, conversation_id)))

    def _speakers_read(
        self, tenant: str, conversation_id: str
    ) -> tuple[tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], list[str]]]:
        """``conversation_speakers`` as a snapshot read: a request's recall asks for it first,
        and ``request_state`` queues it with the request's first reads."""

        def send() -> psycopg.Cursor[Any]:
            return self._db.execute(
                "SELECT term FROM conversation_terms WHERE tenant_id = %s "
                "AND conversation_id = %s AND speaker ORDER BY term",
                (tenant, conversation_id),
            )

        def decode(sent: psycopg.Cursor[Any]) -> list[str]:
            return [r[0] for r in sent.fetchall()]

        return ("speakers", tenant, conversation_id), send, decode

    def stored_term_vectors(
        self, tenant: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        if not words:
            return {}
        rows = self._db.execute(
            "SELECT term, vector FROM term_vectors WHERE tenant_id = %s AND embedder = %s "
            "AND term = ANY(%s)",
            (tenant, embedder, list(words)),
        ).fetchall()
        return {r[0]: float32_row(r[1]) for r in rows}

    def missing_term_vectors(self, embedder: str, limit: int) -> list[MissingTermVector]:
        rows = self._db.execute(
            "SELECT DISTINCT t.tenant_id, t.term FROM conversation_terms t "
            "WHERE NOT t.speaker AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = t.tenant_id AND v.embedder = %s AND v.term = t.term) "
            f"AND {may_build('t.tenant_id', '%s')} LIMIT %s",
            (embedder, embedder, embedder, limit),
        ).fetchall()
        return [MissingTermVector(r[0], r[1]) for r in rows]

    def set_term_vectors(self, tenant: str, embedder: str, vectors: Sequence[TermVector]) -> None:
        """Store word vectors (first one wins: a word's vector never changes for one embedder),
        for words some conversation of the tenant still uses; the conversations using the new
        ones see them at their next search (their generation moves)."""
        if not vectors:
            return
        # one order for every writer, so concurrent inserts of the same words cannot deadlock
        ordered = sorted({v.term: v.vector for v in vectors}.items())
        self._lock_conversations_of(
            "SELECT t.conversation_id FROM conversation_terms t WHERE t.tenant_id = %s "
            "AND t.term = ANY(%s) AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = t.tenant_id AND v.embedder = %s AND v.term = t.term)",
            (tenant, tenant, [t for t, _ in ordered], embedder),
        )
        added = self._db.execute(
            "INSERT INTO term_vectors (tenant_id, embedder, term, vector) "
            "SELECT %s, %s, v.term, v.vector FROM unnest(%s::text[], %s::halfvec[]) "
            "AS v(term, vector) WHERE EXISTS (SELECT 1 FROM conversation_terms t "
            f"WHERE t.tenant_id = %s AND t.term = v.term) AND {may_build('%s', '%s')} "
            "ON CONFLICT DO NOTHING RETURNING term",
            (tenant, embedder, [t for t, _ in ordered], [halfvec(v) for _, v in ordered],
             tenant, tenant, embedder, embedder),
        ).fetchall()  # fmt: skip
        if added:
            self._db.execute(
                "UPDATE search_generations g SET generation = g.generation + 1 "
                "FROM (SELECT DISTINCT conversation_id FROM conversation_terms "
                "WHERE tenant_id = %s AND term = ANY(%s)) t "
                "WHERE g.tenant_id = %s AND g.conversation_id = t.conversation_id",
                (tenant, [r[0] for r in added], tenant),
            )

    def vocabulary_vectors(
        self, tenant: str, user: str, conversation_id: str, embedder: str, words: Sequence[str]
    ) -> dict[str, Vector]:
        if not words:
            return {}
        rows = self._db.execute(
            f"SELECT t.term, v.vector {_VOCABULARY} AND t.term = ANY(%s)",
            (embedder, tenant, tenant, conversation_id, tenant, tenant, conversation_id, user,
             list(words)),
        ).fetchall()  # fmt: skip
        return {r[0]: float32_row(r[1]) for r in rows}

    def nearest_words(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        embedder: str,
        terms: Sequence[TermVector],
        *,
        per_term: int,
        min_similarity: float,
    ) -> list[str]:
        if not terms or per_term < 1:
            return []
        # per term, its nearest vocabulary words (one more: the term itself may be among them).
        # The vocabulary's vectors are read once for every term (materialised): joined inside
        # the lateral subquery they were looked up again per term, an index probe per word.
        rows = self._db.execute(
            f"""
            WITH vocabulary AS MATERIALIZED (SELECT t.term, v.vector {_VOCABULARY})
            SELECT q.i, w.term FROM unnest(%s::text[], %s::halfvec[]) WITH ORDINALITY
                AS q(term, vector, i)
            CROSS JOIN LATERAL (
                SELECT d.term, d.distance FROM (
                    SELECT vocabulary.term, vocabulary.vector <=> q.vector AS distance
                    FROM vocabulary
                ) d
                WHERE d.distance <= %s ORDER BY d.distance, d.term LIMIT %s
            ) w
            ORDER BY q.i, w.distance, w.term
            """,
            (
                embedder, tenant, tenant, conversation_id, tenant, tenant, conversation_id, user,
                [t.term for t in terms], [halfvec(t.vector) for t in terms],
                1.0 - min_similarity, per_term + 1,
            ),
        ).fetchall()  # fmt: skip
        asked = [t.term for t in terms]
        found: dict[int, list[str]] = {}
        for i, word in rows:
            found.setdefault(int(i) - 1, []).append(word)
        out: list[str] = []
        seen = set(asked)
        for i, term in enumerate(asked):
            near = [w for w in found.get(i, []) if w != term][:per_term]
            for word in near:
                if word not in seen:
                    seen.add(word)
                    out.append(word)
        return out


def _window(window: Window) -> tuple[str, list[Any]]:
    sql, params = "", list[Any]()
    if window.max_depth is not None:
        sql += " AND i.depth < %s"
        params.append(window.max_depth)
    if window.since is not None:
        sql += " AND i.created_at >= %s"
        params.append(window.since)
    if window.until is not None:
        sql += " AND i.created_at < %s"
        params.append(window.until)
    return sql, params
