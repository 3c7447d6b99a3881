"""Summaries read and written in SQLite's own table: a deleted conversation leaves no summary row,
and a summary row tampered with is not used. (Moved from ``tests/test_summaries.py``; deletion on
every backend: ``src/convmem/testing/contract/test_deletion.py``.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import convmem
from tests.test_summaries import DECISION, SMALL, chat


def test_deleting_the_conversation_deletes_its_summaries(
    alice: convmem.Scope, db_path: Path
) -> None:
    conv = alice.create_conversation()
    chat(conv, 40, assemble=True)
    assert conv.summaries()
    conv.delete()
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM summaries").fetchone() == (0,)


def test_a_summary_that_no_longer_matches_its_messages_is_not_used(
    alice: convmem.Scope, db_path: Path
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 40, assemble=True)
    ctx = conv.assemble("continue", model=SMALL)
    used = ctx.report.summary_id
    assert used is not None
    with sqlite3.connect(db_path) as db:  # as if the covered path had changed under it
        db.execute(
            "UPDATE summaries SET covered_hash = 'x', id = 'sum_tampered' WHERE id = ?", (used,)
        )
    again = conv.assemble("continue", model=SMALL)
    assert again.report.summary_id not in (None, used, "sum_tampered")
    assert again.report.summary_source == "built"
    assert "sum_tampered" not in {r.id for r in conv.summaries()}
