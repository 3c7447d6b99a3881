"""Each SQLite index row stores its columns' term counts (``term_counts``), which BM25 reads
instead of tokenising the candidates again: they must be the counts of what the row holds after
every path that writes it — appends, a neighbour's arrival or deletion (its context changes),
edits, imports, scripts written without spaces — and m075 must count the rows of a database
written before it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import convmem
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.store.sqlite.term_counts import column_terms

COUNTS = (
    "SELECT message_id, coalesce(body_form, body), coalesce(ctx_form, ctx), body_terms, "
    "body_words, ctx_terms, ctx_words FROM message_index ORDER BY id"
)


def _stored(db_path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db_path)) as db:
        return list(db.execute(COUNTS).fetchall())


def _written(memory: convmem.Memory) -> None:
    """A conversation written through every path that touches an index row."""
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    first = conv.append("user", "I started pottery classes last month, every Tuesday.")
    conv.append("assistant", "Pottery is a great hobby! What are you making?")
    asked = conv.append("user", "Bowls, mostly. 我上个月开始学陶艺。Café naïve İstanbul 🤙🤙")
    conv.append("assistant", "Bowls are a good start.")
    conv.edit(asked.id, "Mugs, mostly — and a teapot for my mother.")
    reply = conv.append("assistant", "A teapot is ambitious; the spout is the hard part.")
    conv.append("user", "Thanks, I will try it next week.")
    conv.delete_message(reply.id)
    conv.append("user", f"Back to {first.id[:4]}: the class moved to Wednesdays.")
    nodes = [
        ImportNode(f"m{i}", f"m{i - 1}" if i else None,
                   NewMessage("user" if i % 2 else "assistant", f"Imported turn {i}, camping."))
        for i in range(5)
    ]  # fmt: skip
    import_trees(alice, "test", [ImportTree("old", "Old", None, nodes, "m4")])


def test_every_index_row_stores_the_counts_of_what_it_holds(
    memory: convmem.Memory, db_path: Path
) -> None:
    _written(memory)
    rows = _stored(db_path)
    assert len(rows) >= 10
    for _, body, ctx, body_terms, body_words, ctx_terms, ctx_words in rows:
        assert (body_terms, body_words) == (
            column_terms(body).counts,
            column_terms(body).words,
        )
        assert (ctx_terms, ctx_words) == (column_terms(ctx).counts, column_terms(ctx).words)
    assert any(ctx for _, _, ctx, *_ in rows)  # the neighbours' context is counted too


def test_m075_counts_the_rows_of_a_database_written_before_it(db_path: Path) -> None:
    with convmem.open(db_path) as memory:
        _written(memory)
    before = _stored(db_path)
    with closing(sqlite3.connect(db_path)) as db, db:
        for column in ("body_terms", "body_words", "ctx_terms", "ctx_words"):
            db.execute(f"ALTER TABLE message_index DROP COLUMN {column}")
        db.execute("DELETE FROM _migrations WHERE name = 'm075_term_counts'")
    with convmem.open(db_path) as memory:
        hits = memory.scope("acme", "alice").conversations()
        assert hits
    assert _stored(db_path) == before
