"""The SQLite search tables behind hybrid search: deletes leave the FTS5 indexes, vocabularies and
vectors; the index is rebuilt from messages and upgraded from a database that predates it; the
worker fills vectors written without them. (Moved from ``tests/test_search.py``; the public
behaviour on every backend is in ``src/convmem/testing/contract/test_deletion.py``.)"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem
from convmem import HashingEmbedder
from tests.test_search import FILLER, chat, history


@pytest.fixture
def mem(db_path: Path) -> Iterator[convmem.Memory]:
    """As in ``tests/test_search.py``: SQLite with the hashing embedder."""
    with convmem.open(db_path, embedder=HashingEmbedder()) as m:
        yield m


def fts_count(db_path: Path, table: str, word: str) -> int:
    with sqlite3.connect(db_path) as db:
        row = db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (f'"{word}"',))
        return int(row.fetchone()[0])


def rows(db_path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db_path) as db:
        return list(db.execute(sql, params).fetchall())


def test_deleted_messages_leave_both_indexes(mem: convmem.Memory, db_path: Path) -> None:
    alice = mem.scope("acme", "alice")
    conv = alice.create_conversation()
    ids = chat(conv, history("9876"))
    conv.append("user", "the quokka photo was lovely")
    assert mem.wait_for_vectors(30)  # vectors are filled after the write
    assert fts_count(db_path, "message_fts", "quokka") == 1
    assert rows(db_path, "SELECT count(*) FROM conversation_terms WHERE term = 'quokka'") == [(1,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'quokka'") == [(1,)]
    deleted = conv.delete_message(ids[4])  # the locker turn and everything after it
    assert ids[4] in deleted
    assert fts_count(db_path, "message_fts", "quokka") == 0
    assert fts_count(db_path, "message_fts", "9876") == 0
    placeholders = ",".join("?" * len(deleted))
    assert rows(
        db_path, f"SELECT count(*) FROM message_index WHERE message_id IN ({placeholders})",
        *deleted,
    ) == [(0,)]  # fmt: skip
    assert rows(db_path, "SELECT count(*) FROM conversation_terms WHERE term = 'quokka'") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'quokka'") == [(0,)]
    assert all(h.message.id not in deleted for h in conv.search("locker code quokka", k=50))
    # the parent's neighbour context no longer holds the deleted turn's words
    assert rows(db_path, "SELECT ctx FROM message_index WHERE message_id = ?", ids[3])[0][0]
    assert "9876" not in str(rows(db_path, "SELECT ctx FROM message_index"))


def test_deleted_memories_leave_both_indexes(mem: convmem.Memory, db_path: Path) -> None:
    alice = mem.scope("acme", "alice")
    notice = alice.remember("My favourite airline is Finnair.")
    assert notice.memory is not None
    assert mem.wait_for_vectors(30)  # vectors are filled after the write
    assert rows(db_path, "SELECT count(*) FROM memory_vectors") == [(1,)]
    alice.memories.delete(notice.memory.id)
    assert fts_count(db_path, "memories_fts", "finnair") == 0
    assert rows(db_path, "SELECT count(*) FROM memory_vectors") == [(0,)]
    assert alice.search_memories("Finnair airline") == []


def test_delete_all_and_conversation_delete_empty_every_search_table(
    mem: convmem.Memory, db_path: Path
) -> None:
    alice, bob = mem.scope("acme", "alice"), mem.scope("acme", "bob")
    for who in (alice, bob):
        chat(who.create_conversation(), history("5555"))
        who.remember("I like the quokka photos.")
    gone = alice.create_conversation()
    chat(gone, ["a conversation about narwhals", "narwhals are whales"])
    gone.delete()
    assert fts_count(db_path, "message_fts", "narwhals") == 0
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'narwhals'") == [(0,)]
    alice.conversation(alice.conversations()[0].id).append("user", "my axolotl is called Bo")
    assert mem.wait_for_vectors(30)  # vectors are filled after the write
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'axolotl'") == [(1,)]
    exported = alice.export()
    json.dumps(exported)  # no vector bytes in an export
    assert not {"message_index", "memory_vectors", "conversation_terms"} & set(exported["data"])
    alice.delete_all()
    for table in ("message_index", "conversation_terms", "memory_vectors", "search_generations"):
        column = "user_id" if table in ("message_index", "memory_vectors") else "conversation_id"
        if column == "user_id":
            left = rows(db_path, f"SELECT count(*) FROM {table} WHERE user_id = 'alice'")
        else:
            left = rows(
                db_path, f"SELECT count(*) FROM {table} WHERE conversation_id NOT IN "
                "(SELECT id FROM conversations)",
            )  # fmt: skip
        assert left == [(0,)], table
    # a word only alice used leaves with her; bob's words (the same ones) keep their vectors
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'axolotl'") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'locker'") == [(1,)]
    assert bob.conversation(bob.conversations()[0].id).search("locker", k=3)


def test_the_index_is_rebuilt_from_messages(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        ids = chat(conv, history("4471"))
    with sqlite3.connect(db_path) as db:  # the index is derived: drop it all
        db.execute("DELETE FROM message_index")
        db.execute("DELETE FROM conversation_terms")
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").conversation(conv.id)
        assert conv.search("locker", k=3) == []
        assert mem.reindex() == 40
        assert ids[4] in [h.message.id for h in conv.search("locker", k=3)]


def test_reindex_finishes_past_messages_it_cannot_index(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        conv.append("user", "look it up")
        # whitespace SQLite's trim() keeps: the SQL pre-filter passes it, indexing refuses it
        call = convmem.ToolCall(id="c1", name="lookup", arguments="{}")
        conv.append("assistant", "\n\t", tool_calls=[call])
        conv.append("tool", "found", tool_call_id="c1")
        conv.append("assistant", "It is on the shelf.")
        assert mem.reindex() == 0  # everything indexable already is; and it returns
    with sqlite3.connect(db_path) as db:
        db.execute("DELETE FROM message_index")
    with convmem.open(db_path) as mem:
        assert mem.reindex() == 2


def test_a_database_from_before_the_index_is_upgraded_and_indexed(db_path: Path) -> None:
    from convmem.store.sqlite import migrations

    with convmem.open(db_path) as mem:  # write through the API, then forget the search tables
        alice = mem.scope("acme", "alice")
        conv = alice.create_conversation()
        ids = chat(conv, history("4471"))
        alice.remember("I prefer aisle seats.")
    with sqlite3.connect(db_path) as db:
        for name in ("m020_message_index", "m021_memory_search", "m065_index_form",
                     "m075_term_counts"):  # fmt: skip
            db.execute("DELETE FROM _migrations WHERE name = ?", (name,))
        db.execute("DROP VIEW message_fts_source")
        for table in ("message_fts", "message_index", "conversation_terms", "term_vectors",
                      "search_generations", "memory_vectors", "memories_fts"):  # fmt: skip
            db.execute(f"DROP TABLE {table}")
        for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update",
                        "memory_vectors_forget", "message_index_forget",
                        "conversation_terms_forget", "search_generation_forget"):  # fmt: skip
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("ALTER TABLE memories DROP COLUMN text_form")  # m065's
        db.execute("ALTER TABLE memories DROP COLUMN subject_form")
        migrations.m006_memories_fts(db)  # the memory index as it was before m021
        db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    with convmem.open(db_path) as mem:  # migrates, then indexes the old messages
        alice = mem.scope("acme", "alice")
        conv = alice.conversation(conv.id)
        assert ids[4] in [h.message.id for h in conv.search("locker code", k=3)]
        assert [h.memory.text for h in alice.search_memories("aisle")] == ["I prefer aisle seats."]


def _unembedded(db_path: Path) -> tuple[int, int, int]:
    (turns,) = rows(db_path, "SELECT count(*) FROM message_index WHERE vector IS NULL")[0]
    (memories,) = rows(
        db_path,
        "SELECT count(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)",
    )[0]
    (words,) = rows(
        db_path,
        "SELECT count(*) FROM conversation_terms t WHERE t.speaker = 0 AND NOT EXISTS "
        "(SELECT 1 FROM term_vectors v WHERE v.tenant_id = t.tenant_id AND v.term = t.term)",
    )[0]
    return int(turns), int(memories), int(words)  # type: ignore[call-overload]


def test_the_worker_embeds_what_was_written_without_vectors(db_path: Path) -> None:
    from convmem.ops.worker import Worker

    config = convmem.Config(embed_on_write=False)
    with convmem.open(db_path, config=config, embedder=HashingEmbedder()) as mem:
        alice = mem.scope("acme", "alice")
        alice.remember("I prefer aisle seats on long flights.")
        conv = alice.create_conversation()
        chat(conv, [*FILLER, "I took up pottery last month.", "How fun!"])
        turns, memories, words = _unembedded(db_path)
        assert turns == len(FILLER) + 2 and memories == 1 and words > 20
        worker = Worker(mem)
        # one batch of each kind at a time, so jobs are never kept waiting long
        assert worker.embed_pending(batch_size=3) == 3 + 3 * 8 + 1
        assert worker.run(exit_when_idle=True) == 0  # no summary jobs; the rest embedded
        assert _unembedded(db_path) == (0, 0, 0)
        hit = conv.search("pottery", k=1)[0]
        assert "pottery" in hit.message.content and "vector" in hit.retrievers
        assert worker.embed_pending() == 0


def test_the_worker_command_embeds_with_the_chosen_model(db_path: Path) -> None:
    from click.testing import CliRunner

    from convmem.cli.main import main

    with convmem.open(db_path) as mem:  # no embedder: nothing is embedded on write
        chat(mem.scope("acme", "alice").create_conversation(), FILLER)
    assert _unembedded(db_path)[0] == len(FILLER)
    ran = CliRunner().invoke(main, ["worker", "--db", str(db_path), "--once", "--embedder",
                                    "hashing"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert _unembedded(db_path) == (0, 0, 0)


def test_a_reindex_builds_the_people_and_things_of_the_turns_it_indexes(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        alice = mem.scope("acme", "alice")
        alice.create_conversation().append("user", "My sister Ana Lopez moved to Lisbon.")
        for entity in alice.entities.list():
            alice.entities.delete(entity.id)
    with sqlite3.connect(db_path) as db:  # the index is derived: drop it all
        db.execute("DELETE FROM message_index")
    with convmem.open(db_path) as mem:
        assert mem.reindex() == 1
        names = {e.name for e in mem.scope("acme", "alice").entities.list()}
        assert {"Ana Lopez", "Lisbon"} <= names
