"""A SQLite database from before the index form (m065) holds Chinese, Japanese and Korean text
as whole runs; migrating re-indexes turns, memories and tools so a word inside a run is found,
and the message index's highlights (the BM25 that ranks lexical hits) read the same pairs."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import convmem
from convmem.store.sqlite import migrations

TOOL = {
    "name": "track_parcel",
    "description": "荷物の配達状況を調べる。",
    "input_schema": {"type": "object", "properties": {"number": {"type": "string"}}},
}


def test_a_database_from_before_the_index_form_is_reindexed(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = [m for m in migrations.MIGRATIONS if m.__name__ != "m065_index_form"]
    assert len(before) == len(migrations.MIGRATIONS) - 1
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", before)
        with convmem.open(db_path) as memory:
            alice = memory.scope("acme", "alice")
            conv = alice.create_conversation()
            turn = conv.append("user", "我上个月开始学陶艺，每周二上课。")
            conv.append("user", "저는 지난달에 도예를 시작했어요.")
            kept = alice.remember("我对花生过敏。").memory
            memory.tools.register("acme", TOOL)
            # the old schema indexed whole runs: the word inside finds nothing
            assert conv.search("陶艺", k=5) == []
            assert alice.search_memories("花生") == []
    assert kept is not None
    with closing(sqlite3.connect(db_path)) as db, db:  # the tool's document as it was written
        db.execute("UPDATE tools SET document = ?", (f"track_parcel {TOOL['description']}",))
    with convmem.open(db_path) as memory:  # migrates
        alice = memory.scope("acme", "alice")
        conv = alice.conversation(conv.id)
        assert [h.message.id for h in conv.search("陶艺", k=5)][:1] == [turn.id]
        assert len(conv.search("도예", k=5)) >= 1
        assert [h.memory.id for h in alice.search_memories("花生")] == [kept.id]
        with memory.store.read() as tx:
            assert [h.name for h in tx.search_tool_terms("acme", ["配達"], limit=5)] == [
                "track_parcel"
            ]
        # new writes after the migration are indexed the same way
        later = conv.append("user", "周末我去游泳了。")
        assert [h.message.id for h in conv.search("游泳", k=5)][:1] == [later.id]
        conv.delete_message(later.id)
        assert conv.search("游泳", k=5) == []
