"""Tenant retention periods on real SQLite: what stays, the audit, the worker. (What goes, read in
SQLite's tables: ``tests/store/sqlite/test_retention_rows.py``.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

import convmem
import convmem.ids
from convmem.cli.main import main
from convmem.domain.memories import save_memory
from convmem.ops.worker import Worker
from convmem.testing.clock import written_days_ago


def chat(conv: convmem.Conversation, n: int = 4) -> None:
    for i in range(n):
        conv.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the garden shed")


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


def test_the_command_shows_sets_and_applies_periods_per_layer(
    memory: convmem.Memory, db_path: Path
) -> None:
    cli = CliRunner()
    db = ["--db", str(db_path)]
    assert "no tenant has a retention period" in cli.invoke(main, ["retention", "show", *db]).output
    ran = cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days",
                            "memories=30", "--days", "audit=400"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "memories     30 days" in ran.output and "transcripts  kept until deleted" in ran.output
    bad = cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days", "backups=3"])
    assert bad.exit_code != 0 and "LAYER=DAYS" in bad.output
    shown = cli.invoke(main, ["retention", "show", *db, "--json"])
    (policy,) = json.loads(shown.output)
    assert policy["retention"]["memories"] == 30 and policy["retention"]["audit"] == 400
    # changing one layer keeps the others; 0 switches a layer off
    cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days", "audit=0"])
    assert memory.tenant_policy("acme").retention == convmem.RetentionPeriods(memories=30)
    # changing a period keeps the tenant's other switches
    memory.set_tenant_policy("acme", retention={"memories": 30},
                             recall_unconfirmed_entity_facts=True)  # fmt: skip
    cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days", "audit=0"])
    assert memory.tenant_policy("acme").recall_unconfirmed_entity_facts is True
    cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days", "indexes=30"])
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats.")  # stored now: kept
    with written_days_ago(40):
        conv = alice.create_conversation()
        chat(conv, 2)
    applied = cli.invoke(main, ["retention", "apply", *db, "--tenant", "acme"])
    assert applied.exit_code == 0, applied.output
    assert "acme: 0 memories, 2 indexes deleted" in applied.output
    assert conv.search("garden", k=5) == [] and len(conv.messages()) == 2
    assert len(alice.memories.list()) == 1


def test_the_command_sets_special_categories_the_cap_and_expires_proposals(
    memory: convmem.Memory, db_path: Path
) -> None:
    """Issue 36 from the command line: the tenant's special categories, their purposes and the
    proposal cap are set beside the periods and kept when another setting changes; the
    ``proposals`` layer expires what nobody confirmed, a user who stopped writing included."""
    cli = CliRunner()
    db = ["--db", str(db_path)]
    ran = cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--sensitive", "health",
                            "--sensitive-purpose", "task_automation", "--max-pending-proposals",
                            "5", "--days", "proposals=14"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "special categories on explicit request: health (recalled for task_automation)" in (
        ran.output
    )
    assert "pending proposals per user: at most 5" in ran.output
    cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--days", "audit=400"])
    policy = memory.tenant_policy("acme")
    assert (policy.sensitive_categories, policy.sensitive_purposes) == (
        ("health",), ("task_automation",),
    )  # fmt: skip
    assert (policy.max_pending_proposals, policy.retention.proposals) == (5, 14)
    refused = cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--sensitive",
                                "payment_card"])  # fmt: skip
    assert refused.exit_code != 0
    alice = memory.scope("acme", "alice")
    twenty_days_ago = datetime.now(UTC) - timedelta(days=20)
    with written_days_ago(20), memory.store.write() as tx:  # as if proposed then, untouched since
        stale = save_memory(tx, alice.principal, "Likes jazz", source_kind="inference",
                            status="proposed", created_at=twenty_days_ago).memory  # fmt: skip
    fresh = alice.propose("Likes opera").memory
    assert stale is not None and fresh is not None
    applied = cli.invoke(main, ["retention", "apply", *db, "--tenant", "acme"])
    assert applied.exit_code == 0, applied.output
    assert "1 proposals" in applied.output
    assert [m.id for m in alice.memories.list(status="proposed")] == [fresh.id]
    closed = cli.invoke(main, ["retention", "set", *db, "--tenant", "acme", "--sensitive", "none",
                               "--max-pending-proposals", "0"])  # fmt: skip
    assert closed.exit_code == 0, closed.output
    policy = memory.tenant_policy("acme")
    assert (policy.sensitive_categories, policy.max_pending_proposals) == ((), None)
