"""The search benchmark's dataset written into PostgreSQL by ``COPY`` (psycopg's copy, binary
format): the rows ``benchmarks/search.py`` generates, in the PostgreSQL backend's schema.

Per-row inserts through the store would take hours at a million messages. What differs from the
store's own writes, and why it does not change what is measured: foreign-key triggers are off
while loading (``session_replication_role = replica``; the generated rows are consistent by
construction), and the full-text GIN index is built once after the load instead of row by row.
The ``tsvector`` columns are PostgreSQL's own generated columns, computed as the store's inserts
compute them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from search import Tenant, counted, generate, shape_counts

import convmem
from convmem.store.postgres.memories import memory_owner_lexeme
from convmem.store.postgres.search import conversation_lexeme

# built after the load rather than updated row by row
_DEFERRED_INDEXES = ("message_index_fts", "memories_fts")


def _copy(db: psycopg.Connection[Any], table: str, columns: Sequence[tuple[str, str]],
          rows: Iterator[Sequence[Any]]) -> None:  # fmt: skip
    names = ", ".join(name for name, _ in columns)
    with db.cursor().copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([kind for _, kind in columns])
        for row in rows:
            copy.write_row(row)


def _tenant_rows(tenant: Tenant, embedder: str) -> dict[str, list[Sequence[Any]]]:
    rows: dict[str, list[Sequence[Any]]] = {
        "conversations": [], "messages": [], "message_index": [], "conversation_terms": [],
        "search_generations": [], "memories": [], "memory_vectors": [], "term_vectors": [],
    }  # fmt: skip
    t = tenant.id
    for c in tenant.conversations:
        rows["conversations"].append((t, c.id, c.user, "chat", c.ids[-1], c.created_at))
        rows["search_generations"].append((t, c.id, 1))
        lexeme = conversation_lexeme(t, c.id)
        before = 0
        for i, text in enumerate(c.texts):
            parent = c.ids[i - 1] if i else None
            rows["messages"].append(
                (t, c.ids[i], c.user, c.id, parent, i, c.roles[i], text, c.times[i],
                 c.estimates[i], before)
            )  # fmt: skip
            before += c.estimates[i]
            rows["message_index"].append(
                (t, c.ids[i], c.user, c.id, i, c.times[i], c.roles[i], lexeme, c.bodies[i],
                 c.contexts[i], embedder, HalfVector(c.vectors[i]))
            )  # fmt: skip
        rows["conversation_terms"].extend(
            [(t, c.id, w, False) for w in sorted(c.vocabulary)]
            + [(t, c.id, "user", True), (t, c.id, "assistant", True)]
        )
    for m in tenant.memories:
        rows["memories"].append(
            (t, m.id, m.user, "user", "fact", m.subject, m.text, "user_explicit", "confirmed",
             m.at, m.at, memory_owner_lexeme(t, m.user))
        )  # fmt: skip
        rows["memory_vectors"].append((t, m.id, m.user, embedder, HalfVector(m.vector)))
    rows["term_vectors"] = [
        (t, embedder, w, HalfVector(tenant.word_vectors[i])) for i, w in enumerate(tenant.words)
    ]
    return rows


_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "conversations": (("tenant_id", "text"), ("id", "text"), ("user_id", "text"),
                      ("title", "text"), ("active_leaf_id", "text"),
                      ("created_at", "timestamptz")),
    "messages": (("tenant_id", "text"), ("id", "text"), ("user_id", "text"),
                 ("conversation_id", "text"), ("parent_id", "text"), ("depth", "int4"),
                 ("role", "text"), ("content", "text"), ("created_at", "timestamptz"),
                 ("estimate_tokens", "int4"), ("estimate_before", "int4")),
    "message_index": (("tenant_id", "text"), ("message_id", "text"), ("user_id", "text"),
                      ("conversation_id", "text"), ("depth", "int4"),
                      ("created_at", "timestamptz"), ("speaker", "text"),
                      ("scope_lexeme", "text"), ("body", "text"), ("ctx", "text"),
                      ("embedder", "text"), ("vector", "halfvec")),
    "conversation_terms": (("tenant_id", "text"), ("conversation_id", "text"), ("term", "text"),
                           ("speaker", "bool")),
    "search_generations": (("tenant_id", "text"), ("conversation_id", "text"),
                           ("generation", "int8")),
    "memories": (("tenant_id", "text"), ("id", "text"), ("user_id", "text"), ("scope", "text"),
                 ("category", "text"), ("subject_key", "text"), ("text", "text"),
                 ("source_kind", "text"), ("status", "text"), ("created_at", "timestamptz"),
                 ("updated_at", "timestamptz"), ("owner_lexeme", "text")),
    "memory_vectors": (("tenant_id", "text"), ("memory_id", "text"), ("user_id", "text"),
                       ("embedder", "text"), ("vector", "halfvec")),
    "term_vectors": (("tenant_id", "text"), ("embedder", "text"), ("term", "text"),
                     ("vector", "halfvec")),
}  # fmt: skip


def build_postgres(url: str, shape: dict[str, int], embedder_name: str) -> dict[str, Any]:
    """Write the dataset into the (empty) database at ``url``; returns counts and the time."""
    started = time.perf_counter()
    convmem.open(url).close()  # the schema, by convmem's own migrations
    term_vectors = 0
    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        db.execute("SET session_replication_role = replica")  # no FK triggers while loading
        saved: list[str] = []
        for index in _DEFERRED_INDEXES:
            # this schema's: a server holding other convmem schemas has indexes of the same name
            row = db.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s "
                "AND schemaname = current_schema()",
                (index,),
            )
            found = row.fetchone()
            assert found is not None, f"the schema lacks the index {index}"
            saved.append(found[0])
            db.execute(f"DROP INDEX {index}")
        for tenant in counted(generate(shape), shape):
            rows = _tenant_rows(tenant, embedder_name)
            with db.transaction():
                for table, columns in _COLUMNS.items():
                    _copy(db, table, columns, iter(rows[table]))
            term_vectors += len(tenant.words)
        print("  building the full-text indexes ...", flush=True)
        db.execute("SET maintenance_work_mem = '512MB'")
        for definition in saved:
            db.execute(definition)
        db.execute("VACUUM ANALYZE")
    return {
        "counts": shape_counts(shape, term_vectors),
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def is_built(url: str) -> bool:
    """Whether ``url`` already holds a dataset (its schema and some conversations)."""
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute("SELECT to_regclass('conversations') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return False
        return db.execute("SELECT 1 FROM conversations LIMIT 1").fetchone() is not None


def relabel_postgres(url: str, embedder_name: str) -> None:
    """Point the stored (random) vectors at another embedder (see ``search.relabel``)."""
    with psycopg.connect(url, autocommit=True) as db:
        for table in ("message_index", "term_vectors", "memory_vectors"):
            db.execute(
                f"UPDATE {table} SET embedder = %s WHERE embedder <> %s", (embedder_name,) * 2
            )
        db.execute("UPDATE search_generations SET generation = generation + 1")
