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
"""

from __future__ import annotations

from convmem.store.postgres.connection import Connection

# embedders' widths: the hashing embedder's default, MiniLM-sized models, OpenAI's shortened
# and full vectors, base and large encoders
WIDTHS = (256, 384, 512, 768, 1024, 1536)

# turns in a conversation from which its turns are ranked through the index: below it the
# exact scan costs ~3 ms or less and is exact
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


def nearest_sql(width: int, filters: str) -> str:
    """A conversation's nearest turns as one statement: exact below ``APPROXIMATE_FROM`` turns,
    through the index of ``width`` from it (each branch is gated by a one-time condition, so
    only one runs). Parameters: tenant, conversation (its size); then for each branch the query
    vector, tenant, conversation, user, embedder, the ``filters``' parameters, the query vector
    again and the limit."""
    cast = f"::halfvec({width})"
    scope = (
        "FROM message_index i WHERE i.tenant_id = %s AND i.conversation_id = %s "
        f"AND i.user_id = %s AND i.embedder = %s AND i.vector IS NOT NULL{filters}"
    )
    return f"""
        WITH n AS MATERIALIZED (
            -- the deepest turn's depth counts the longest branch's turns: one index seek
            SELECT coalesce(max(s.depth) + 1, 0) AS turns FROM message_index s
            WHERE s.tenant_id = %s AND s.conversation_id = %s
        )
        SELECT message_id, speaker, depth, 1 - distance, created_at FROM (
            (SELECT i.message_id, i.speaker, i.depth, i.created_at, i.seq,
                i.vector <=> %s AS distance
             {scope} AND ((SELECT turns FROM n) < {APPROXIMATE_FROM}
                 OR current_setting('hnsw.iterative_scan', true) IS DISTINCT FROM 'relaxed_order')
             ORDER BY i.vector <=> %s, i.seq LIMIT %s)
            UNION ALL
            (SELECT i.message_id, i.speaker, i.depth, i.created_at, i.seq,
                i.vector{cast} <=> %s{cast} AS distance
             {scope} AND vector_dims(i.vector) = {width}
             AND (SELECT turns FROM n) >= {APPROXIMATE_FROM}
             AND current_setting('hnsw.iterative_scan', true) = 'relaxed_order'
             ORDER BY i.vector{cast} <=> %s{cast} LIMIT %s)
        ) r ORDER BY r.distance, r.seq
    """
