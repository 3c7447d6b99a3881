"""Tenant retention periods on real SQLite: what goes, what stays, the audit, the worker."""

from __future__ import annotations

import sqlite3
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

import convmem
import convmem.ids
from convmem.cli import main
from convmem.worker import Worker

DAY_MS = 86_400_000


@contextmanager
def written_days_ago(days: float) -> Iterator[None]:
    """Ids made inside are stamped ``days`` in the past, as if the rows were stored then."""
    shifted = types.SimpleNamespace(time_ns=lambda: time.time_ns() - int(days * DAY_MS) * 10**6)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(convmem.ids, "time", shifted)
        yield


def chat(conv: convmem.Conversation, n: int = 4) -> None:
    for i in range(n):
        conv.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the garden shed")


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


def test_no_period_means_nothing_is_deleted(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    with written_days_ago(1000):
        chat(alice.create_conversation())
    assert memory.apply_retention() == {}
    memory.set_tenant_policy("acme", retention_days=30)
    memory.set_tenant_policy("acme", retention_days=None)  # switched off again
    assert memory.apply_retention() == {}
    assert len(alice.conversations()) == 1
    with pytest.raises(convmem.InvalidInput):
        memory.set_tenant_policy("acme", retention_days=0)


def test_the_worker_and_the_command_apply_it(memory: convmem.Memory, db_path: Path) -> None:
    memory.set_tenant_policy("acme", retention_days=7)
    alice = memory.scope("acme", "alice")
    with written_days_ago(8):
        chat(alice.create_conversation())
    worker = Worker(memory, retention_seconds=3600)
    assert worker.run(exit_when_idle=True) == 0
    assert alice.conversations() == []
    assert worker.apply_retention_if_due() is None  # not due again within the hour
    with written_days_ago(8):
        chat(alice.create_conversation())
    ran = CliRunner().invoke(main, ["retention", "apply", "--db", str(db_path)])
    assert ran.exit_code == 0, ran.output
    assert "acme: 1 conversations deleted" in ran.output
    assert alice.conversations() == []


def test_a_user_deleting_a_conversation_is_audited_too(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    chat(conv)
    conv.delete()
    (event,) = [e for e in alice.audit() if e.action == "conversation.deleted"]
    assert (event.object_id, event.actor) == (conv.id, "user:alice")
    assert "garden" not in repr(event)
