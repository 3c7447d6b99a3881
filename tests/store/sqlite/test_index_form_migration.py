"""A SQLite database from before the index form (m065) holds Chinese, Japanese and Korean text
as whole runs; migrating re-indexes turns, memories and tools so a word inside a run is found,
and the message index's stored term counts (the BM25 that ranks lexical hits) hold the same
pairs."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import convmem

TOOL = {
    "name": "track_parcel",
    "description": "荷物の配達状況を調べる。",
    "input_schema": {"type": "object", "properties": {"number": {"type": "string"}}},
}


def _as_before_the_index_form(db_path: Path) -> None:
    """Take a database back to the schema before m065: the full-text tables over the raw texts
    (as m020 and m021 made them), no form columns, the tools' documents as written then."""
    owner = "'m' || hex(new.tenant_id) || 'x' || hex(new.user_id)"
    statements = [
        "DROP TRIGGER message_fts_insert", "DROP TRIGGER message_fts_delete",
        "DROP TRIGGER message_fts_update", "DROP TABLE message_fts",
        "DROP VIEW message_fts_source",
        "DROP TRIGGER memories_fts_insert", "DROP TRIGGER memories_fts_update",
        "CREATE VIRTUAL TABLE message_fts USING fts5(scope, body, ctx, content='message_index', "
        "content_rowid='id', tokenize='porter unicode61')",
        "CREATE TRIGGER message_fts_insert AFTER INSERT ON message_index BEGIN "
        "INSERT INTO message_fts (rowid, scope, body, ctx) "
        "VALUES (new.id, new.scope, new.body, new.ctx); END",
        "INSERT INTO message_fts (message_fts) VALUES ('rebuild')",
        "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memories_fts (rowid, owner, text, subject_key) "
        f"VALUES (new.rowid, {owner}, new.text, new.subject_key); END",
        "UPDATE memories_fts SET (text, subject_key) = (SELECT text, subject_key FROM memories m "
        "WHERE m.rowid = memories_fts.rowid)",
        "ALTER TABLE message_index DROP COLUMN body_form",
        "ALTER TABLE message_index DROP COLUMN ctx_form",
        "ALTER TABLE memories DROP COLUMN text_form",
        "ALTER TABLE memories DROP COLUMN subject_form",
        f"UPDATE tools SET document = 'track_parcel {TOOL['description']}'",
        "DELETE FROM _migrations WHERE name = 'm065_index_form'",
    ]  # fmt: skip
    with closing(sqlite3.connect(db_path)) as db, db:
        for sql in statements:
            db.execute(sql)


def test_a_database_from_before_the_index_form_is_reindexed(db_path: Path) -> None:
    with convmem.open(db_path) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        turn = conv.append("user", "我上个月开始学陶艺，每周二上课。")
        conv.append("user", "저는 지난달에 도예를 시작했어요.")
        kept = alice.remember("我每天早上喝乌龙茶。").memory
        memory.tools.register("acme", TOOL)
    assert kept is not None
    _as_before_the_index_form(db_path)
    with closing(sqlite3.connect(db_path)) as db:  # the old index holds whole runs
        probe = "SELECT count(*) FROM {0} WHERE {0} MATCH ?"
        assert db.execute(probe.format("message_fts"), ('"陶艺"',)).fetchone() == (0,)
        assert db.execute(probe.format("memories_fts"), ('"乌龙"',)).fetchone() == (0,)
    with convmem.open(db_path) as memory:  # migrates
        alice = memory.scope("acme", "alice")
        conv = alice.conversation(conv.id)
        assert [h.message.id for h in conv.search("陶艺", k=5)][:1] == [turn.id]
        assert len(conv.search("도예", k=5)) >= 1
        assert [h.memory.id for h in alice.search_memories("乌龙")] == [kept.id]
        with memory.store.read() as tx:
            tools = tx.search_tool_terms("acme", ["配達"], limit=5)
        assert [h.name for h in tools] == ["track_parcel"]
        # writes after the migration are indexed the same way, and deletes leave
        later = conv.append("user", "周末我去游泳了。")
        assert [h.message.id for h in conv.search("游泳", k=5)][:1] == [later.id]
        conv.delete_message(later.id)
        assert conv.search("游泳", k=5) == []
