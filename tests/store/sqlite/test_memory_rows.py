"""Long-term memory read in SQLite's own tables: a deleted memory leaves the FTS5 index, and
refused writes (temporary conversation, memory off, never-store) add no memory row. (Moved from
``tests/test_memory.py``; on every backend: ``src/convmem/testing/contract/test_deletion.py`` and
``src/convmem/testing/contract/test_refusals.py``.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import convmem
from convmem import NeverStoreViolation, NotFound
from tests.test_memory import context_text


def memory_rows(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])


def test_deleted_memory_is_gone_everywhere(alice: convmem.Scope, db_path: Path) -> None:
    notice = alice.remember("My favourite airline is Finnair.")
    assert notice.memory is not None
    memory_id = notice.memory.id
    conv = alice.create_conversation()
    assert "Finnair" in context_text(conv, "Which airline do I like?")
    assert alice.memories.delete(memory_id) == [memory_id]
    with pytest.raises(NotFound):
        alice.memories.get(memory_id)
    assert alice.search_memories("Finnair airline") == []
    assert "Finnair" not in context_text(conv, "Which airline do I like?")
    exported = json.dumps(alice.export(), ensure_ascii=False)
    assert "Finnair" not in exported
    deleted = [e for e in alice.audit() if e.action == "memory.deleted"]
    assert [e.object_id for e in deleted] == [memory_id]
    assert deleted[0].actor == "user:alice"
    with sqlite3.connect(db_path) as db:  # the full-text index forgot it too
        hits = db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'finnair'")
        assert hits.fetchone()[0] == 0


def test_a_temporary_conversation_neither_reads_nor_writes_memory(
    alice: convmem.Scope, db_path: Path
) -> None:
    alice.remember("I prefer aisle seats.")
    before = memory_rows(db_path)
    temporary = alice.create_conversation(temporary=True)
    message = temporary.append("user", "Remember that my name is Sam.")
    assert [(n.status, n.reason) for n in message.notices] == [
        ("blocked", "temporary_conversation")
    ]
    assert temporary.append("user", "I prefer window seats.").notices == ()
    assert memory_rows(db_path) == before
    ctx = temporary.assemble("Which seat do I like?")
    assert ctx.report.memory_ids == [] and "aisle" not in json.dumps(ctx.messages)
    source = temporary.append("user", "I like tea.")
    notice = alice.remember("I like tea.", source_message_id=source.id)
    assert (notice.status, notice.reason) == ("blocked", "temporary_conversation")


def test_memory_off_means_nothing_read_or_written(alice: convmem.Scope, db_path: Path) -> None:
    alice.remember("I prefer aisle seats.")
    alice.set_memory_enabled(False)
    assert not alice.memory_enabled()
    before = memory_rows(db_path)
    conv = alice.create_conversation()
    message = conv.append("user", "Remember that I like tea.")
    assert [(n.status, n.reason) for n in message.notices] == [("blocked", "memory_off")]
    assert alice.remember("I like coffee.").status == "blocked"
    assert memory_rows(db_path) == before
    assert conv.assemble("Which seat?").report.memory_ids == []
    assert alice.search_memories("aisle seats") == []
    alice.set_memory_enabled(True)
    assert conv.assemble("Which seat?").report.memory_ids != []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("My API key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "credential"),
        ("my password is hunter2!", "credential"),
        ("My card is 4111 1111 1111 1111", "payment_card"),
        ("My IBAN is DE89 3704 0044 0532 0130 00", "bank_account"),
        ("My SSN is 123-45-6789", "government_id"),
        ("I have diabetes", "health"),
    ],
)
def test_never_store_blocks_and_writes_nothing(
    alice: convmem.Scope, db_path: Path, text: str, reason: str
) -> None:
    before = memory_rows(db_path)
    notice = alice.remember(text)
    assert (notice.status, notice.reason) == ("blocked", reason)
    with pytest.raises(NeverStoreViolation) as info:
        alice.remember(text, strict=True)
    assert info.value.reason == reason and text not in str(info.value)
    conv = alice.create_conversation()
    message = conv.append("user", f"Remember that {text}")
    assert [(n.status, n.reason) for n in message.notices] == [("blocked", reason)]
    assert memory_rows(db_path) == before
    assert all(e.action != "memory.saved" for e in alice.audit())
