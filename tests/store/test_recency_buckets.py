"""PostgreSQL reads a term's newest matches from its newest recency buckets
(``convmem.store.postgres.fulltext.RECENCY_BUCKET``), not every match of the term; SQLite walks
a term's postings newest first and stops at the bound (its cost is counted in
``tests/store/sqlite/test_bounded_cost.py``). Both bring the same turns.

A GIN index returns a term's matches unordered, so "each term's newest ``TERM_CANDIDATES``
matches" used to fetch every turn of the conversation holding the term, and count up to
``DOCUMENT_FREQUENCY_CAP`` more, before keeping the newest: a common word's search read most of
a long conversation. The rows a search reads are counted here by PostgreSQL itself (the
backend's ``pg_stat_get_xact_tuples_returned`` and ``_fetched`` of the message index), and the
candidates are checked against the newest matches the conversation holds.
"""

from __future__ import annotations

from typing import Any

import convmem
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.store.ranking import EVERY_TURN, TERM_CANDIDATES, Window
from tests.extras import module_of_extra
from tests.store.backends import Backend

# PostgreSQL's bucket (convmem.store.postgres.fulltext.RECENCY_BUCKET, imported where psycopg
# is): the conversations span several, on either backend
RECENCY_BUCKET = 1024

# several buckets, and more turns holding the common word than the old count read; long enough
# that the planner reads a conversation through the full-text index (shorter, it reads the
# conversation's rows through its btree, whatever the query)
TURNS = 20_000
RARE_EVERY = 7  # one turn in this many also says "quokka"


def test_the_bucket_is_postgresqls() -> None:
    module_of_extra("psycopg", "postgres")
    from convmem.store.postgres.fulltext import RECENCY_BUCKET as POSTGRES_BUCKET

    assert POSTGRES_BUCKET == RECENCY_BUCKET


def _text(i: int) -> str:
    rare = " The quokka came up again." if i % RARE_EVERY == 0 else ""
    return f"The budget review moved to slot {i}, bring the numbers.{rare}"


def _conversation(memory: convmem.Memory, turns: int = TURNS) -> tuple[str, list[str]]:
    """A conversation of ``turns`` turns, each saying "budget"; its id and its turns' ids in
    order (turn i at depth i)."""
    scope = memory.scope("acme", "alice")
    nodes = [
        ImportNode(f"m{i}", f"m{i - 1}" if i else None,
                   NewMessage("user" if i % 2 == 0 else "assistant", _text(i)))
        for i in range(turns)
    ]  # fmt: skip
    import_trees(scope, "test", [ImportTree("long", "Budgets", None, nodes, f"m{turns - 1}")])
    (record,) = scope.conversations()
    ids = [m.id for m in scope.conversation(record.id).branch()]
    assert len(ids) == turns
    return record.id, ids


def _rows_read(db: Any) -> int:
    """The message-index rows this connection's backend read and has not yet reported (its
    pending counters: earlier transactions' too, hence a difference): rows a bitmap heap scan
    read (returned) and rows an index scan fetched."""
    (count,) = db.execute(
        "SELECT pg_stat_get_xact_tuples_returned('message_index'::regclass) "
        "+ pg_stat_get_xact_tuples_fetched('message_index'::regclass)"
    ).fetchone()
    return int(count)


def _search(
    backend: Backend,
    memory: convmem.Memory,
    conversation_id: str,
    terms: list[str],
    window: Window,
) -> tuple[list[str], int]:
    """Every turn ``search_messages`` scores for ``terms`` (the limit exceeds the candidates),
    and on PostgreSQL the message-index rows the transaction fetched to find them (0 on
    SQLite)."""
    counted = backend.name == "postgresql"
    with memory.store.read() as tx:
        db = tx._db  # type: ignore[attr-defined]
        before = _rows_read(db) if counted else 0
        hits = tx.search_messages(
            "acme", "alice", conversation_id, terms, window=window, limit=10 * TERM_CANDIDATES
        )
        fetched = _rows_read(db) - before if counted else 0
    return [h.message_id for h in hits], int(fetched)


def test_a_common_word_reads_its_newest_matches_not_every_one(backend: Backend) -> None:
    with backend.open() as memory:
        conversation_id, ids = _conversation(memory)
        found, fetched = _search(backend, memory, conversation_id, ["budget"], EVERY_TURN)
        # exactly the newest TERM_CANDIDATES turns holding the word, across a bucket boundary
        # or not, and no more rows fetched than the newest buckets hold (main fetched every
        # match and counted 5,000 more: over 11,000 rows here)
        assert sorted(found) == sorted(ids[-TERM_CANDIDATES:])
        assert fetched <= 3 * RECENCY_BUCKET + TERM_CANDIDATES

        # inside a window ending mid-bucket: the newest matches before it
        end = 3 * RECENCY_BUCKET + 100
        found, fetched = _search(
            backend, memory, conversation_id, ["budget"], Window(max_depth=end)
        )
        assert sorted(found) == sorted(ids[end - TERM_CANDIDATES : end])
        assert fetched <= 3 * RECENCY_BUCKET + TERM_CANDIDATES


def _matching(
    backend: Backend, memory: convmem.Memory, conversation_id: str, word: str
) -> list[str]:
    """Every turn of the conversation whose index row matches ``word`` (its own text or its
    neighbours'), oldest first: read whole, as the oracle."""
    with memory.store.read() as tx:
        db = tx._db  # type: ignore[attr-defined]
        if backend.name == "postgresql":
            rows = db.execute(
                "SELECT message_id FROM message_index WHERE tenant_id = 'acme' "
                "AND conversation_id = %s AND tsv @@ plainto_tsquery('english', %s) "
                "ORDER BY depth",
                (conversation_id, word),
            ).fetchall()
        else:
            rows = db.execute(
                "SELECT i.message_id FROM message_fts JOIN message_index i "
                "ON i.id = message_fts.rowid WHERE message_fts MATCH ? "
                "AND i.tenant_id = 'acme' AND i.conversation_id = ? ORDER BY i.depth",
                (f'{{body ctx}} : "{word}"', conversation_id),
            ).fetchall()
    return [r[0] for r in rows]


def test_a_rarer_word_brings_its_newest_matches_from_as_many_buckets_as_hold_them(
    backend: Backend,
) -> None:
    with backend.open() as memory:
        conversation_id, ids = _conversation(memory, 6 * RECENCY_BUCKET)
        said = _matching(backend, memory, conversation_id, "quokka")
        assert TERM_CANDIDATES < len(said) < len(ids) // 2  # spread over every bucket
        found, _ = _search(backend, memory, conversation_id, ["quokka"], EVERY_TURN)
        assert sorted(found) == sorted(said[-TERM_CANDIDATES:])
        # every match, when fewer than TERM_CANDIDATES lie in the window
        end = RARE_EVERY * 100
        found, _ = _search(backend, memory, conversation_id, ["quokka"], Window(max_depth=end))
        assert sorted(found) == sorted(m for m in said if ids.index(m) < end)
        # both words: each brings its own newest matches, the rare word's older ones too
        found, _ = _search(backend, memory, conversation_id, ["budget", "quokka"], EVERY_TURN)
        assert set(found) == set(ids[-TERM_CANDIDATES:]) | set(said[-TERM_CANDIDATES:])
