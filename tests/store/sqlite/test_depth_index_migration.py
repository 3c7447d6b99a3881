"""A SQLite database from before m068 (no index of messages by depth) gains it on open, and
recall's branch check reads it: a database of the previous schema keeps answering the same."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import convmem


def _as_before_m068(db_path: Path) -> None:
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("DROP INDEX messages_by_depth")
        db.execute("DELETE FROM _migrations WHERE name = 'm070_messages_by_depth'")


def _plan(db_path: Path) -> str:
    with closing(sqlite3.connect(db_path)) as db:
        rows = db.execute(
            "EXPLAIN QUERY PLAN SELECT depth FROM messages WHERE tenant_id = 'acme' "
            "AND conversation_id = 'c' AND depth IN (1, 2) GROUP BY depth HAVING count(*) > 1"
        ).fetchall()
    return " ".join(str(r[-1]) for r in rows)


def test_a_database_from_before_the_depth_index_gains_it(db_path: Path) -> None:
    with convmem.open(db_path) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        ids = [conv.append("user", f"turn {i} about the quokka").id for i in range(6)]
        edited = conv.edit(ids[2], "turn 2 about the lake").id
        conv.append("user", "and then?")
    _as_before_m068(db_path)
    assert "messages_by_depth" not in _plan(db_path)
    with convmem.open(db_path) as memory:
        assert "messages_by_depth" in _plan(db_path)
        conv = memory.scope("acme", "alice").conversation(conv.id)
        start = conv.branch()[-1].id
        with memory.store.read() as tx:
            assert tx.on_branch("acme", start, [*ids, edited], 0) == {ids[0], ids[1], edited}
