"""Retention read in SQLite's own tables: a conversation deleted for idling leaves no message,
index, vocabulary or token-count row. (Moved from ``tests/test_retention.py``; every backend:
``src/convmem/testing/contract/test_deletion.py``.)"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import convmem
from convmem.testing.clock import written_days_ago
from tests.test_retention import chat


def count(db_path: Path, sql: str) -> int:
    with sqlite3.connect(db_path) as db:
        return int(db.execute(sql).fetchone()[0])


def test_conversations_idle_past_the_period_go_with_their_derived_data(
    memory: convmem.Memory, db_path: Path
) -> None:
    memory.set_tenant_policy("acme", retention_days=30)
    alice = memory.scope("acme", "alice")
    with written_days_ago(40):
        old = alice.create_conversation()
        chat(old)
        empty = alice.create_conversation()
        revived = alice.create_conversation()
        chat(revived)
    chat(revived, 1)  # written to today: the whole conversation stays
    recent = alice.create_conversation()
    chat(recent)
    imported = alice.create_conversation()  # old dates, stored today: kept
    imported.append("user", "from 2019", created_at=datetime(2019, 5, 1, tzinfo=UTC))
    kept = alice.remember("I keep the shed key under the blue pot.").memory
    other_tenant = memory.scope("globex", "alice")  # no retention period
    with written_days_ago(400):
        ancient = other_tenant.create_conversation()
        chat(ancient)

    old_ids = [m.id for m in old.messages()]
    assert memory.apply_retention() == {"acme": 2}
    for gone in (old, empty):
        with pytest.raises(convmem.NotFound):
            alice.conversation(gone.id).messages()
    for conv in (revived, recent, imported):
        assert alice.conversation(conv.id).messages()
    assert other_tenant.conversation(ancient.id).messages()
    assert kept is not None and alice.memories.get(kept.id).text.startswith("I keep the shed")
    # nothing derived is left behind for the deleted conversations
    for table in ("messages", "message_index", "conversation_terms"):
        left = count(db_path, f"SELECT count(*) FROM {table} WHERE conversation_id = '{old.id}'")
        assert left == 0, table
    listed = ", ".join(f"'{i}'" for i in old_ids)
    assert (
        count(db_path, f"SELECT count(*) FROM message_tokens WHERE message_id IN ({listed})") == 0
    )
    assert not [h for h in alice.conversation(recent.id).search("garden shed") if
                h.message.conversation_id == old.id]  # fmt: skip
    # the audit says what happened, by whom, without content
    events = [e for e in alice.audit() if e.action == "conversation.deleted"]
    assert {e.object_id for e in events} == {old.id, empty.id}
    assert {e.actor for e in events} == {"retention"}
    assert all("shed" not in repr(e) for e in events)
    # applying again finds nothing more; a date later still takes the rest
    assert memory.apply_retention() == {"acme": 0}
    later = datetime.now(UTC) + timedelta(days=31)
    assert memory.apply_retention(now=later) == {"acme": 3}
