"""Retention per layer on every backend, with an injected clock: each layer's period deletes
that layer's rows — through the paths a user's delete takes — and nothing of the others; a
second sweep at the same time deletes nothing; the audit says what went, never what it said.
The worker runs sweeps as jobs (state, attempts, retries, counts)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

import convmem
import convmem.domain.retention
from convmem.ops.worker import RETENTION_JOB, Worker
from tests.test_summaries import DECISION, chat

SECRETISH = "my garden shed code word is periwinkle"


def later(days: float) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


def sweep(memory: convmem.Memory, days: float) -> dict[str, int]:
    return memory.sweep_retention("acme", now=later(days)).get("acme", {})


def _content_free(memory: convmem.Memory, *scopes: convmem.Scope) -> None:
    for scope in scopes:
        for event in scope.audit():
            assert "periwinkle" not in json.dumps(event.details)
            assert "aisle" not in json.dumps(event.details)


def test_the_old_period_keeps_its_meaning_and_name(memory: convmem.Memory) -> None:
    policy = memory.set_tenant_policy("acme", retention_days=30)
    assert policy.retention == convmem.RetentionPeriods(transcripts=30)
    assert memory.tenant_policy("acme").retention_days == 30
    both = memory.set_tenant_policy(
        "acme", retention_days=30, retention={"transcripts": 30, "audit": 400}
    )
    assert both.retention.audit == 400 and both.retention_days == 30
    with pytest.raises(convmem.InvalidInput):
        memory.set_tenant_policy("acme", retention_days=30, retention={"transcripts": 31})
    with pytest.raises(convmem.InvalidInput):
        memory.set_tenant_policy("acme", retention={"backups": 3})
    with pytest.raises(convmem.InvalidInput):
        memory.set_tenant_policy("acme", retention={"summaries": 0})
    assert memory.tenant_policy("acme") == both  # a refused change wrote nothing
    assert memory.tenant_policy("nobody") == convmem.TenantPolicy("nobody")


def test_transcripts_go_whole_after_their_period(memory: convmem.Memory) -> None:
    memory.set_tenant_policy("acme", retention={"transcripts": 30})
    alice, carol = memory.scope("acme", "alice"), memory.scope("initech", "carol")
    conv = alice.create_conversation()
    conv.append("user", f"Remember that {SECRETISH}.")
    kept = carol.create_conversation()  # another tenant, no policy
    kept.append("user", "hello")
    assert sweep(memory, 29) == {"transcripts": 0}
    assert sweep(memory, 31) == {"transcripts": 1}
    assert alice.conversations() == [] and alice.memories.list() != []  # memories: own layer
    assert alice.search_memories("periwinkle")  # not a transcript
    assert sweep(memory, 31) == {"transcripts": 0}  # idempotent
    assert len(carol.conversations()) == 1
    (event,) = [e for e in alice.audit() if e.action == "conversation.deleted"]
    assert (event.object_id, event.actor, event.details["reason"]) == (
        conv.id,
        "retention",
        "retention",
    )
    _content_free(memory, alice)


def test_summaries_and_their_snapshots_go_the_messages_stay(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 40, assemble=True)
    built = len(conv.summaries())
    assert built > 0
    messages = len(conv.messages())
    memory.set_tenant_policy("acme", retention={"summaries": 7})
    assert sweep(memory, 6) == {"summaries": 0}
    assert sweep(memory, 8) == {"summaries": built}
    assert conv.summaries() == []
    assert len(conv.messages()) == messages
    assert sweep(memory, 8) == {"summaries": 0}


def test_entity_facts_go_and_the_entities_they_leave_empty(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "My sister Ana Lopez moved to Lisbon last year.")
    assert alice.entities.list()
    memory.set_tenant_policy("acme", retention={"entities": 30})
    assert sweep(memory, 29) == {"entities": 0}
    swept = sweep(memory, 31)
    assert swept["entities"] >= 1
    assert alice.entities.list() == []
    assert len(conv.messages()) == 1
    assert sweep(memory, 31) == {"entities": 0}


def test_memories_go_with_their_history_as_a_users_delete(memory: convmem.Memory) -> None:
    alice, bob = memory.scope("acme", "alice"), memory.scope("acme", "bob")
    alice.remember("I prefer aisle seats.")
    newer = alice.remember("I prefer window seats.")
    assert newer.superseded
    bob.remember("I like green tea.")
    memory.set_tenant_policy("acme", retention={"memories": 90})
    assert sweep(memory, 89) == {"memories": 0}
    assert sweep(memory, 91) == {"memories": 3}
    assert alice.memories.list(status=None) == [] and bob.memories.list(status=None) == []
    assert alice.search_memories("window") == []
    deleted = [e for e in alice.audit() if e.action == "memory.deleted"]
    assert len(deleted) == 2 and {e.actor for e in deleted} == {"retention"}
    assert all(e.details["reason"] == "retention" for e in deleted)
    assert sweep(memory, 91) == {"memories": 0}
    _content_free(memory, alice, bob)


def test_audit_events_go_after_their_period(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats.")
    alice.create_conversation().delete()
    before = len(alice.audit())
    assert before >= 2
    memory.set_tenant_policy("acme", retention={"audit": 365})
    assert sweep(memory, 364) == {"audit": 0}
    assert sweep(memory, 366) == {"audit": before + 1}  # and the first sweep's own event
    assert alice.audit() == []
    assert alice.memories.list()  # the memory is not the audit


def test_index_rows_go_the_transcript_stays(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "Which aisle has the periwinkle paint?")
    conv.append("assistant", "The paint is in aisle nine.")
    assert conv.search("periwinkle", k=5)
    memory.set_tenant_policy("acme", retention={"indexes": 30})
    assert sweep(memory, 29) == {"indexes": 0}
    assert sweep(memory, 31) == {"indexes": 2}
    assert conv.search("periwinkle", k=5) == []
    assert conv.messages()[0].content.startswith("Which aisle")
    assert sweep(memory, 31) == {"indexes": 0}
    newer = conv.append("user", "And the periwinkle brushes?")
    assert [h.message.id for h in conv.search("periwinkle", k=5)] == [newer.id]


def test_every_layer_at_once_leaves_nothing_of_the_user(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "My sister Ana Lopez moved to Lisbon last year.")
    alice.remember("I prefer aisle seats.")
    memory.set_tenant_policy("acme", retention=dict.fromkeys(convmem.RETENTION_LAYERS, 10))
    swept = sweep(memory, 11)
    assert list(swept) == list(convmem.RETENTION_LAYERS)
    assert swept["transcripts"] == 1 and swept["memories"] == 1
    exported = alice.export()["data"]
    assert exported["conversations"] == [] and exported["memories"] == []
    assert exported["messages"] == [] and exported["summaries"] == []
    assert alice.entities.list() == []
    # again: only the first sweep's own audit event is old enough by the injected clock
    assert sweep(memory, 11) == dict.fromkeys(convmem.RETENTION_LAYERS, 0) | {"audit": 1}


def test_the_worker_sweeps_as_observable_jobs_and_retries(
    memory: convmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "hello there")
    alice.remember("I prefer aisle seats.")
    memory.set_tenant_policy("acme", retention={"transcripts": 7, "memories": 7})
    worker = Worker(memory, clock=lambda: later(8))

    calls = {"n": 0}
    real = convmem.domain.retention.sweep_tenant

    def flaky(*args: object, **kwargs: object) -> dict[str, int]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("database went away")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("convmem.ops.worker.sweep_tenant", flaky)
    assert worker.apply_retention_if_due() == {}  # the first attempt failed
    (job,) = memory.jobs()
    assert (job.kind, job.tenant_id, job.status, job.attempts) == (
        RETENTION_JOB,
        "acme",
        "pending",
        1,
    )
    assert job.last_error == "RuntimeError"
    assert alice.conversations()  # nothing was deleted by the failed attempt
    assert worker.queue_retention() == 0  # queued once per tenant and period
    monkeypatch.setattr("convmem.ops.worker.time.time", lambda: 1e10)  # past the backoff
    assert worker.run(exit_when_idle=True) == 1  # the retry
    (job,) = memory.jobs()
    assert (job.status, job.attempts) == ("done", 2)
    assert json.loads(job.last_error or "") == {"memories": 1, "transcripts": 1}
    assert alice.conversations() == [] and alice.memories.list() == []
