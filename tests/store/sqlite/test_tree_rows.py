"""The SQLite rows behind the message tree: revision lineage, token counts stored at write,
subtree deletes deeper than SQLite's cascade limit, and the file reopened by path or URL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import convmem
from convmem import NotFound


def test_edit_lineage_is_stored(alice: convmem.Scope, db_path: Path) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "first")
    edited = conv.edit(q.id, "second")
    with sqlite3.connect(db_path) as db:
        row = db.execute(
            "SELECT revision_of, revision_kind FROM messages WHERE id = ?", (edited.id,)
        ).fetchone()
    assert row == (q.id, "edit")


def test_deleting_a_subtree_deletes_its_token_counts(alice: convmem.Scope, db_path: Path) -> None:
    conv = alice.create_conversation()
    conv.append("user", "a")
    b = conv.append("assistant", "b")
    conv.append("user", "c")
    conv.append("assistant", "d", parent_id=b.id)
    assert len(conv.delete_message(b.id)) == 3
    with sqlite3.connect(db_path) as db:
        assert (
            db.execute("SELECT count(*) FROM message_tokens").fetchone()[0]
            == len(convmem.Config().tokenizers) + 1
        )


def test_delete_a_deep_branch_and_a_conversation(alice: convmem.Scope, db_path: Path) -> None:
    conv = alice.create_conversation()
    first = conv.append("user", "0")
    for i in range(1, 1500):  # deeper than SQLite's cascade limit
        conv.append("assistant" if i % 2 else "user", str(i))
    assert len(conv.delete_message(first.id)) == 1500
    conv.append("user", "again")
    conv.pin("be brief")
    conv.delete()
    with pytest.raises(NotFound):
        alice.conversation(conv.id)
    with sqlite3.connect(db_path) as db:
        for table in ("messages", "message_tokens", "conversations", "pinned_instructions"):
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_counts_are_stored_at_write(alice: convmem.Scope, db_path: Path) -> None:
    conv = alice.create_conversation()
    m = conv.append("user", "count me once")
    with sqlite3.connect(db_path) as db:
        rows = dict(
            db.execute(
                "SELECT tokenizer, tokens FROM message_tokens WHERE message_id = ?", (m.id,)
            ).fetchall()
        )
    assert set(rows) == {"o200k_base", "cl100k_base", "estimate"}
    assert all(count > 0 for count in rows.values())


def test_reopening_the_file_keeps_everything(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("t", "u").create_conversation(title="kept")
        m = conv.append("user", "persist me")
    with convmem.open(f"sqlite:///{db_path}") as mem:
        again = mem.scope("t", "u").conversation(conv.id)
        assert again.message(m.id).content == "persist me"
        assert again.record().title == "kept"
