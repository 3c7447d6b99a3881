"""What ranking a conversation's turns by meaning costs on PostgreSQL as the conversation grows,
and what the HNSW index changes (issue 32 item 1: "vectors ranked by an index when the scope is
large").

Run::

    python benchmarks/pg_vector_scope.py [--quick] [--sizes 1000,10000,100000]
        [--ef-search N] [--json OUT.json]

What it builds (a PostgreSQL of the run's own, or ``CONVMEM_BENCH_POSTGRES_URL``; the schema by
convmem's migrations): one user's conversations of each size, and 200 other users' conversations
of 50 turns, written into ``message_index`` by ``COPY`` (foreign-key triggers off while loading,
as ``search_postgres.py`` does). The vectors are 384-dimension unit vectors drawn around 64
centres (clustered, as sentence embeddings are; uniformly random vectors are the worst case an
approximate index meets, and no model runs here): this measures time and agreement with the
exact ranking, not retrieval quality.

What it times (nearest-rank p50 / p95 in milliseconds, after warm-up, 20 queries each; the query
is a stored turn's vector with noise), at each size and for a small conversation (50 turns) of
another user:

* ``exact``: main's statement before the index (exact cosine over the conversation's rows, read
  through the B-tree that starts with tenant and conversation), sent as it was;
* ``store``: the store's own ``nearest_messages(limit=20)``: exact below ``APPROXIMATE_FROM``
  turns, through the HNSW index of the vectors' width from there
  (``convmem.store.postgres.vector_index``), with the share of the exact top 20 it returns
  (``agreement_at_20``);
* ``server_ms``: for each, the server's own execution time (EXPLAIN ANALYZE's, median).

The HNSW index is dropped while the rows are loaded and built once after (its build time is
reported), as ``search_postgres.py`` does with the full-text index. The JSON names the load
average each figure was taken at.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from benchmark_databases import database
from pgvector import HalfVector
from pgvector.psycopg import register_vector

import convmem
from convmem.store.postgres import connection
from convmem.store.postgres.search import conversation_lexeme
from convmem.store.postgres.vector_index import APPROXIMATE_FROM, index_name, nearest_sql
from convmem.store.ranking import Window

TENANT = "bench"
EMBEDDER = "clustered-384"
DIMENSIONS = 384
CENTRES = 64
LIMIT = 20
QUERIES = 20
OTHER_USERS = 200  # each with one conversation of 50 turns: the "small scope among many"
OTHER_TURNS = 50

_COLUMNS = (
    ("tenant_id", "text"), ("message_id", "text"), ("user_id", "text"),
    ("conversation_id", "text"), ("depth", "int4"), ("created_at", "timestamptz"),
    ("speaker", "text"), ("scope_lexeme", "text"), ("body", "text"), ("ctx", "text"),
    ("embedder", "text"), ("vector", "halfvec"), ("approximate", "bool"),
)  # fmt: skip


def _vectors(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    picked = centres[rng.integers(0, len(centres), n)]
    raw = picked + 0.6 * rng.standard_normal((n, DIMENSIONS)) / np.sqrt(DIMENSIONS)
    unit: np.ndarray = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _rows(user: str, conversation: str, vectors: np.ndarray) -> Iterator[Sequence[Any]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lexeme = conversation_lexeme(TENANT, conversation)
    long = len(vectors) >= APPROXIMATE_FROM  # its rows in the index, as the store flags them
    for depth, vector in enumerate(vectors):
        speaker = "user" if depth % 2 == 0 else "assistant"
        yield (TENANT, f"{conversation}-{depth}", user, conversation, depth,
               start + timedelta(seconds=depth), speaker, lexeme, f"turn {depth}", "",
               EMBEDDER, HalfVector(vector), long)  # fmt: skip


def build(url: str, sizes: Sequence[int], rng: np.random.Generator) -> tuple[
    dict[str, np.ndarray], float]:  # fmt: skip
    """The conversations (id -> their vectors) written into ``message_index``, and the seconds
    the HNSW index took to build."""
    convmem.open(url).close()  # the schema, by convmem's own migrations
    centres = rng.standard_normal((CENTRES, DIMENSIONS)) / np.sqrt(DIMENSIONS)
    written: dict[str, np.ndarray] = {}
    scopes = [("alice", f"long-{n}", n) for n in sizes]
    scopes += [(f"user-{u}", f"small-{u}", OTHER_TURNS) for u in range(OTHER_USERS)]
    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        db.execute(f"DROP INDEX {index_name(DIMENSIONS)}")  # built once, after the load
        db.execute("SET session_replication_role = replica")  # no FK triggers while loading
        names = ", ".join(name for name, _ in _COLUMNS)
        with db.cursor().copy(f"COPY message_index ({names}) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types([kind for _, kind in _COLUMNS])
            for user, conversation, n in scopes:
                written[conversation] = _vectors(rng, centres, n)
                for row in _rows(user, conversation, written[conversation]):
                    cp.write_row(row)
        # each conversation's state as the store leaves it: a long one's turns all indexed
        db.cursor().executemany(
            "INSERT INTO search_generations (tenant_id, conversation_id, generation, approximate) "
            "VALUES (%s, %s, 1, %s)",
            [(TENANT, c, "ready" if n >= APPROXIMATE_FROM else "no") for _, c, n in scopes],
        )
        started = time.perf_counter()
        m030_message_vector_index_of(db, DIMENSIONS)
        built = time.perf_counter() - started
        db.execute("ANALYZE message_index")
    return written, built


def _query(rng: np.random.Generator, vectors: np.ndarray) -> np.ndarray:
    near = vectors[rng.integers(0, len(vectors))]
    raw = near + 0.3 * rng.standard_normal(DIMENSIONS) / np.sqrt(DIMENSIONS)
    unit: np.ndarray = (raw / np.linalg.norm(raw)).astype(np.float32)
    return unit


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"p50_ms": round(statistics.median(ordered), 3), "p95_ms": round(p95, 3)}


def m030_message_vector_index_of(db: psycopg.Connection[Any], width: int) -> None:
    """The index of ``width`` as migration m030 creates it."""
    db.execute(
        f"CREATE INDEX {index_name(width)} ON message_index USING hnsw "
        f"((vector::halfvec({width})) halfvec_cosine_ops) "
        f"WHERE approximate AND vector_dims(vector) = {width}"
    )


# main's statement before the index (cd0bcbd's ``nearest_messages``), without a window
_EXACT = (
    "SELECT i.message_id, i.speaker, i.depth, 1 - (i.vector <=> %s), i.created_at "
    "FROM message_index i WHERE i.tenant_id = %s AND i.conversation_id = %s "
    "AND i.user_id = %s AND i.embedder = %s AND i.vector IS NOT NULL "
    "ORDER BY i.vector <=> %s, i.seq LIMIT %s"
)


def executed(memory: Any, user: str, conversation: str, queries: list[np.ndarray], *,
             store: bool) -> float:  # fmt: skip
    """The server's own execution time of each statement (EXPLAIN ANALYZE), median in ms: a
    figure the client's share of a busy machine does not reach."""
    ms = []
    with memory.store.read() as tx:
        for q in [queries[0], *queries]:
            vector = HalfVector(q)
            if store:
                sql = nearest_sql(DIMENSIONS, "")
                scope = (TENANT, conversation, user, EMBEDDER)
                params: tuple[Any, ...] = (TENANT, conversation, vector, *scope, vector, LIMIT,
                                           vector, *scope, vector, LIMIT)  # fmt: skip
            else:
                sql, params = _EXACT, (vector, TENANT, conversation, user, EMBEDDER, vector, LIMIT)
            plan = [r[0] for r in tx._db.execute("EXPLAIN (ANALYZE) " + sql, params).fetchall()]
            ms.append(float(next(line for line in plan if line.startswith("Execution Time"))
                            .split()[2]))  # fmt: skip
    return round(statistics.median(ms[1:]), 3)


def timed(memory: Any, user: str, conversation: str, queries: list[np.ndarray], *,
          store: bool) -> tuple[dict[str, float], list[list[str]]]:  # fmt: skip
    """Each query through the store's ``nearest_messages`` (``store``) or main's exact
    statement: times and the ids ranked. The first call warms the connection and the cache."""
    times, found = [], []
    for q in [queries[0], *queries]:
        with memory.store.read() as tx:
            started = time.perf_counter()
            if store:
                ids = [
                    h.message_id
                    for h in tx.nearest_messages(
                        TENANT, user, conversation, EMBEDDER, q, window=Window(), limit=LIMIT
                    )
                ]
            else:
                vector = HalfVector(q)
                ids = [
                    r[0]
                    for r in tx._db.execute(
                        _EXACT, (vector, TENANT, conversation, user, EMBEDDER, vector, LIMIT)
                    ).fetchall()
                ]
            times.append((time.perf_counter() - started) * 1000)
        found.append(ids)
    return _percentiles(times[1:]), found[1:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 1000 and 10000")
    parser.add_argument("--sizes", help="comma-separated conversation sizes")
    parser.add_argument("--json", dest="json_out", help="write the results here")
    parser.add_argument("--ef-search", type=int, help="hnsw.ef_search instead of the store's 100")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [1000, 10000] if args.quick else [1000, 10000, 100000])  # fmt: skip
    rng = np.random.default_rng(32)
    results: dict[str, Any] = {"sizes": sizes, "limit": LIMIT, "dimensions": DIMENSIONS,
                               "other_users": OTHER_USERS, "rows": []}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder, database("postgresql", Path(folder)) as url:
        started = time.perf_counter()
        written, built = build(url, sizes, rng)
        results["load_seconds"] = round(time.perf_counter() - started, 1)
        results["hnsw_build_seconds"] = round(built, 1)
        if args.ef_search:  # what the store's connections set, as they open
            connection.VECTOR_SCAN_SETTINGS = (
                f"SET hnsw.iterative_scan = 'relaxed_order'; SET hnsw.ef_search = {args.ef_search}"
            )
            results["ef_search"] = args.ef_search
        scopes = [("alice", f"long-{n}", n) for n in sizes] + [("user-7", "small-7", OTHER_TURNS)]
        queries = {c: [_query(rng, written[c]) for _ in range(QUERIES)] for _, c, _ in scopes}
        with convmem.open(url) as memory:
            for user, conversation, n in scopes:
                exact, truth = timed(memory, user, conversation, queries[conversation],
                                     store=False)  # fmt: skip
                store, found = timed(memory, user, conversation, queries[conversation],
                                     store=True)  # fmt: skip
                exact["server_ms"] = executed(memory, user, conversation, queries[conversation],
                                              store=False)  # fmt: skip
                store["server_ms"] = executed(memory, user, conversation, queries[conversation],
                                              store=True)  # fmt: skip
                agreement = statistics.mean(
                    len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(found, truth, strict=True)
                )
                load = [round(x, 2) for x in os.getloadavg()]
                row = {"turns": n, "conversation": conversation, "exact": exact, "store": store,
                       "agreement_at_20": round(agreement, 3), "indexed": n >= APPROXIMATE_FROM,
                       "load": load}  # fmt: skip
                results["rows"].append(row)
                print(f"{n:>7,} turns: exact p50 {exact['p50_ms']:7.2f} p95 {exact['p95_ms']:7.2f}"
                      f" server {exact['server_ms']:6.2f} | store p50 {store['p50_ms']:7.2f} "
                      f"p95 {store['p95_ms']:7.2f} server {store['server_ms']:6.2f} ms"
                      f" ({'index' if row['indexed'] else 'exact'}, agreement@20 "
                      f"{agreement:.2f})  load {load}")  # fmt: skip
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
