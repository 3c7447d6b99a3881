"""PostgreSQL's vectors of turns and of words: what is missing, filled or staged, and the
nearest by meaning within a window (``SearchTxnMixin`` ranks by words)."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.embedder_switch import may_build, may_serve
from convmem.store.postgres.rows import float32_row, halfvec

# ts_rank's weights for {D, C, B, A}: the owner lexeme (D) counts nothing, a neighbour's words
# (B) half of the turn's own (A); the same ratio as the SQLite backend's bm25 column weights.
from convmem.store.postgres.search import SearchTxnMixin, window_sql
from convmem.store.postgres.vector_index import nearest_sql
from convmem.store.ranking import (
    MessageHitRow,
    Window,
)
from convmem.store.search_index import (
    EmbeddedTurn,
    MessageVector,
    MissingMessageVector,
    MissingTermVector,
    TermVector,
    Vector,
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


class VectorTxnMixin(SearchTxnMixin):
    """A transaction's vector reads and writes (after ``SearchTxnMixin``'s words)."""

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
        """Cosine over the conversation's rows, in the database, with the scope in the query
        that ranks: exact until all of a conversation's turns are in the HNSW index (from
        ``APPROXIMATE_FROM`` turns), through the index of the vector's width from then
        (``postgres/vector_index.py``)."""
        if limit < 1:
            return []
        filters, params = window_sql(window)
        query = halfvec(vector)
        scope = (tenant, conversation_id, user, embedder, *params)
        # planned for its parameters every time (never prepared): the generic plan a prepared
        # statement falls back to after five runs left the HNSW walk for a sort of the whole
        # conversation (1 -> 16-25 ms a query at 10,000 turns, measured)
        rows = self._db.execute(
            nearest_sql(len(vector), filters),
            (tenant, conversation_id, query, *scope, query, limit, query, *scope, query, limit),
            prepare=False,
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
