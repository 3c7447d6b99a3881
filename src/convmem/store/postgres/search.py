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
from convmem.store.index_form import stored_index_form
from convmem.store.postgres import vector_index
from convmem.store.postgres.fulltext import RECENCY_BUCKET, TS_CONFIG
from convmem.store.postgres.rows import TxnBase, halfvec
from convmem.store.ranking import (
    DOCUMENT_FREQUENCY_CAP,
    TERM_CANDIDATES,
    MessageHitRow,
    Window,
)
from convmem.store.search_index import (
    IndexedBody,
    IndexedRow,
    IndexEntry,
    UnindexedMessage,
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


class SearchTxnMixin(TxnBase):
    # --- the message index ----------------------------------------------------------------------

    def index_messages(self, tenant: str, user: str, entries: Sequence[IndexEntry]) -> None:
        if not entries:
            return
        self._indexed_ahead = None  # what was read ahead may be what this rewrites
        deepest: dict[str, int] = {}
        for entry in entries:
            deepest[entry.conversation_id] = max(deepest.get(entry.conversation_id, 0), entry.depth)
        conversations = sorted(deepest)  # one order for every writer: no deadlock
        # the generations first: a conversation this write makes long is flagged 'marking' by
        # it, and its rows below with it (``vector_index``'s module docstring)
        self._db.execute(
            vector_index.MARK_WRITTEN_SQL,
            (tenant, vector_index.APPROXIMATE_FROM, conversations,
             [deepest[c] for c in conversations]),
        )  # fmt: skip
        self._db.cursor().executemany(
            "INSERT INTO message_index (tenant_id, message_id, user_id, conversation_id, depth, "
            "created_at, speaker, session, scope_lexeme, body, ctx, body_form, ctx_form, "
            "embedder, vector, approximate) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            f"{vector_index.ROW_FLAG_SQL}) "
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
                    tenant, entry.conversation_id,
                )
                for entry in entries
            ],
        )  # fmt: skip

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
        filters, params = window_sql(window)
        deepest, deepest_params = window_sql(Window(max_depth=window.max_depth))
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


def window_sql(window: Window) -> tuple[str, list[Any]]:
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
