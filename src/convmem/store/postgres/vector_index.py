"""Ranking a long conversation's turns by meaning through an HNSW index (issue 32).

Exact cosine over a conversation's rows costs a distance per turn: in the database 0.9 ms at
1,000 turns, 25 ms at 10,000, 103 ms at 100,000, against 21 ms through the index at 100,000
(``benchmarks/pg_vector_scope.py``, load 8-11 on 2 cores). From ``APPROXIMATE_FROM``
turns the query walks pgvector's HNSW graph instead, with the scope (tenant, user,
conversation, embedder, window) applied while the graph is walked: pgvector 0.8's iterative
scan, ``hnsw.iterative_scan = relaxed_order``, set on every connection by
``connection.VECTOR_SCAN_SETTINGS`` (it changes no other query). The filter never applies to a
ranking already cut: another principal's turns are never ranked, and the scan goes on until
the conversation's own nearest turns are found. The relaxed order is sorted again by distance.
A pgvector older than 0.8 has no iterative scan (a filter would apply to a ranking already
cut): there the setting stays unset and every conversation is ranked exactly.

The vector column has no fixed width (one schema for every embedder) and an HNSW index needs
one, so there is one partial index per common width, over the vectors of that width cast to
it; a width outside ``WIDTHS`` is still answered, by a scan. A shorter conversation is always
ranked exactly: its query names the column itself, which no HNSW index covers, so the planner
cannot walk the graph of every tenant's turns to find a few of one user's (the case an
approximate index gets wrong and slow: 38 ms and 5 of 20 found, measured on random vectors).

Only long conversations' turns are in the indexes (m030): an index row's ``approximate`` flag
puts it there. Every vector written into an HNSW graph costs a walk of it, and m029 made every
turn of every conversation pay it for an index only long ones use: a backfill of 1,536-wide
vectors into 50-turn conversations ran at 1,003 turns a second with every turn in the graph,
1,570 with none (``benchmarks/vector_write_cost.py``, 20,000 turns). A conversation's state is
on its ``search_generations`` row: ``no``; ``marking`` once an index write reaches depth
``APPROXIMATE_FROM - 1`` (from then on its new rows are flagged as they are written); ``ready``
once ``index_conversation_step`` has flagged its older turns, a few depths per transaction
(``marked_below`` is how far it got) and then any left. Its turns are ranked through the index
only when it is ``ready``: until then exactly, as before.
"""

from __future__ import annotations

from convmem.store.postgres.connection import Connection

# embedders' widths: the hashing embedder's default, MiniLM-sized models, OpenAI's shortened
# and full vectors, base and large encoders
WIDTHS = (256, 384, 512, 768, 1024, 1536)

# turns in a conversation from which its turns go into the index and, once all are there, are
# ranked through it: below it the exact scan costs ~3 ms or less and is exact
APPROXIMATE_FROM = 5000


def index_name(width: int) -> str:
    return f"message_index_hnsw_{width}"


def m029_message_vector_indexes(db: Connection) -> None:
    # one partial index per width (the module docstring); the predicate keeps a vector of
    # another width out of the cast, and rows without a vector out of the index
    for width in WIDTHS:
        db.execute(
            f"CREATE INDEX {index_name(width)} ON message_index USING hnsw "
            f"((vector::halfvec({width})) halfvec_cosine_ops) "
            f"WHERE vector_dims(vector) = {width}"
        )


def m030_long_conversations_only(db: Connection) -> None:
    """The indexes of m029 over the flagged rows only (the module docstring): conversations
    long already are flagged ``ready`` here, before the indexes are built over their turns."""
    db.execute("ALTER TABLE message_index ADD COLUMN approximate BOOLEAN NOT NULL DEFAULT FALSE")
    db.execute(
        "ALTER TABLE search_generations ADD COLUMN approximate TEXT NOT NULL DEFAULT 'no' "
        "CHECK (approximate IN ('no', 'marking', 'ready')), "
        "ADD COLUMN marked_below INTEGER NOT NULL DEFAULT 0"
    )
    db.execute(
        "CREATE INDEX search_generations_marking ON search_generations "
        "(tenant_id, conversation_id) WHERE approximate = 'marking'"
    )
    for width in WIDTHS:
        db.execute(f"DROP INDEX {index_name(width)}")
    db.execute(
        "UPDATE search_generations g SET approximate = 'ready' FROM ("
        "SELECT tenant_id, conversation_id FROM message_index GROUP BY tenant_id, conversation_id "
        "HAVING max(depth) + 1 >= %s) l "
        "WHERE g.tenant_id = l.tenant_id AND g.conversation_id = l.conversation_id",
        (APPROXIMATE_FROM,),
    )
    db.execute(
        "UPDATE message_index i SET approximate = TRUE FROM search_generations g "
        "WHERE g.tenant_id = i.tenant_id AND g.conversation_id = i.conversation_id "
        "AND g.approximate = 'ready'"
    )
    for width in WIDTHS:
        db.execute(
            f"CREATE INDEX {index_name(width)} ON message_index USING hnsw "
            f"((vector::halfvec({width})) halfvec_cosine_ops) "
            f"WHERE approximate AND vector_dims(vector) = {width}"
        )


# An index write's first statement: each written conversation's generation bumped, and its
# state moved to 'marking' when the write reaches depth APPROXIMATE_FROM - 1. Parameters: the
# tenant, APPROXIMATE_FROM, the conversations and their deepest written depths.
MARK_WRITTEN_SQL = (
    "INSERT INTO search_generations (tenant_id, conversation_id, generation, approximate) "
    "SELECT %s, c.id, 1, CASE WHEN c.deepest + 1 >= %s THEN 'marking' ELSE 'no' END "
    "FROM unnest(%s::text[], %s::int[]) AS c(id, deepest) "
    "ON CONFLICT (tenant_id, conversation_id) DO UPDATE "
    "SET generation = search_generations.generation + 1, approximate = CASE "
    "WHEN search_generations.approximate = 'no' THEN EXCLUDED.approximate "
    "ELSE search_generations.approximate END"
)
# An index row's flag, as it is written (after MARK_WRITTEN_SQL): in the index when its
# conversation is being marked or is. Parameters: tenant, conversation.
ROW_FLAG_SQL = (
    "coalesce((SELECT g.approximate <> 'no' FROM search_generations g "
    "WHERE g.tenant_id = %s AND g.conversation_id = %s), FALSE)"
)


class ApproximateIndexTxnMixin:
    """``conversations_to_index`` and ``index_conversation_step`` (the module docstring)."""

    _db: Connection

    def conversations_to_index(self, limit: int) -> list[tuple[str, str]]:
        rows = self._db.execute(
            "SELECT tenant_id, conversation_id FROM search_generations "
            "WHERE approximate = 'marking' ORDER BY tenant_id, conversation_id LIMIT %s",
            (limit,),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def index_conversation_step(self, tenant: str, conversation_id: str, depths: int) -> bool:
        # the progress is read unlocked and moved on last, compare-and-set: the rows' flags are
        # written first, so an append's upsert of this row waits only for the commit, not for
        # the vectors going into the graph (two steps at once flag the same rows; one moves on)
        state = self._db.execute(
            "SELECT marked_below, (SELECT max(depth) FROM message_index "
            "WHERE tenant_id = %s AND conversation_id = %s) FROM search_generations "
            "WHERE tenant_id = %s AND conversation_id = %s AND approximate = 'marking'",
            (tenant, conversation_id, tenant, conversation_id),
        ).fetchone()
        if state is None:
            return True
        below, deepest = int(state[0]), state[1]
        if deepest is not None and below <= deepest:
            self._db.execute(
                "UPDATE message_index SET approximate = TRUE WHERE tenant_id = %s "
                "AND conversation_id = %s AND depth >= %s AND depth < %s AND NOT approximate",
                (tenant, conversation_id, below, below + depths),
            )
            self._db.execute(
                "UPDATE search_generations SET marked_below = %s WHERE tenant_id = %s "
                "AND conversation_id = %s AND marked_below = %s",
                (below + depths, tenant, conversation_id, below),
            )
            return False
        # every depth passed: any row written unflagged meanwhile (a write whose statement ran
        # before the state moved), then ready
        self._db.execute(
            "UPDATE message_index SET approximate = TRUE WHERE tenant_id = %s "
            "AND conversation_id = %s AND NOT approximate",
            (tenant, conversation_id),
        )
        self._db.execute(
            "UPDATE search_generations SET approximate = 'ready' WHERE tenant_id = %s "
            "AND conversation_id = %s AND approximate = 'marking'",
            (tenant, conversation_id),
        )
        return True


def nearest_sql(width: int, filters: str) -> str:
    """A conversation's nearest turns as one statement: exact until its turns are all in the
    approximate index (its state ``ready``), through the index of ``width`` from then (each
    branch is gated by a one-time condition, so only one runs). Parameters: tenant,
    conversation (its state); then for each branch the query vector, tenant, conversation,
    user, embedder, the ``filters``' parameters, the query vector again and the limit."""
    cast = f"::halfvec({width})"
    scope = (
        "FROM message_index i WHERE i.tenant_id = %s AND i.conversation_id = %s "
        f"AND i.user_id = %s AND i.embedder = %s AND i.vector IS NOT NULL{filters}"
    )
    return f"""
        WITH n AS MATERIALIZED (
            SELECT EXISTS (SELECT 1 FROM search_generations g WHERE g.tenant_id = %s
                AND g.conversation_id = %s AND g.approximate = 'ready') AS indexed
        )
        SELECT message_id, speaker, depth, 1 - distance, created_at FROM (
            (SELECT i.message_id, i.speaker, i.depth, i.created_at, i.seq,
                i.vector <=> %s AS distance
             {scope} AND (NOT (SELECT indexed FROM n)
                 OR current_setting('hnsw.iterative_scan', true) IS DISTINCT FROM 'relaxed_order')
             ORDER BY i.vector <=> %s, i.seq LIMIT %s)
            UNION ALL
            (SELECT i.message_id, i.speaker, i.depth, i.created_at, i.seq,
                i.vector{cast} <=> %s{cast} AS distance
             {scope} AND i.approximate AND vector_dims(i.vector) = {width}
             AND (SELECT indexed FROM n)
             AND current_setting('hnsw.iterative_scan', true) = 'relaxed_order'
             ORDER BY i.vector{cast} <=> %s{cast} LIMIT %s)
        ) r ORDER BY r.distance, r.seq
    """
