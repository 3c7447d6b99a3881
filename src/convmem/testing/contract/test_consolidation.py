"""Consolidation on every backend: repeated first-person statements across conversations become
one proposal with its evidence — never a memory; small talk never becomes one; a confirmation
merges near-duplicates (audited); stale proposals expire; a cap holds; declined statements are
not proposed again; deleting a turn removes it from the evidence. No path confirms a memory
without the user's act."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.consolidate.run import ConsolidationSettings, consolidate_user
from convmem.model.principal import Principal
from convmem.ops.worker import CONSOLIDATE_JOB, Worker


def _say(scope: convmem.Scope, *texts: str) -> list[str]:
    """Each text in a conversation of its own; the message ids."""
    return [scope.create_conversation().append("user", text).id for text in texts]


def _proposals(scope: convmem.Scope) -> list[convmem.MemoryRecord]:
    return scope.memories.list(status="proposed")


def _consolidate(memory: convmem.Memory, scope: convmem.Scope, *, days: float = 0,
                 **settings: int) -> dict[str, object]:  # fmt: skip
    who = Principal(scope.tenant, scope.user, "consolidation")
    now = datetime.now(UTC) + timedelta(days=days)
    return consolidate_user(memory.store, who, now, ConsolidationSettings(**settings)).to_dict()


def _no_confirmation_without_the_user(scope: convmem.Scope) -> None:
    assert scope.memories.list(status="confirmed") == []
    made = [e for e in scope.audit() if e.action in ("memory.saved", "memory.confirmed")]
    assert made == []


def test_a_repeated_statement_becomes_one_proposal_with_its_evidence(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    first, second = _say(alice, "I love hiking in the mountains.",
                         "I love hiking in mountains on weekends.")  # fmt: skip
    chat = alice.create_conversation()
    chat.append("user", "Remember when we went hiking in the mountains?")
    chat.append("assistant", "Yes, that was a lovely trip!")
    assert len(_proposals(alice)) == 2  # one per conversation, proposed as the user spoke
    worker = Worker(memory)
    assert worker.run(exit_when_idle=True) == 1
    (job,) = [j for j in memory.jobs() if j.kind == CONSOLIDATE_JOB]
    assert job.status == "done" and '"merged": 1' in (job.last_error or "")
    (proposal,) = _proposals(alice)
    assert set(alice.memories.evidence(proposal.id)) == {first, second}
    merged = [e for e in alice.audit() if e.action == "memory.proposal_merged"]
    assert len(merged) == 1 and merged[0].details == {"into": proposal.id}
    assert merged[0].actor == "consolidation"
    _no_confirmation_without_the_user(alice)
    # a second pass finds nothing new: one proposal, the same evidence
    assert _consolidate(memory, alice) == {}
    assert [p.id for p in _proposals(alice)] == [proposal.id]


def test_a_statement_made_in_one_conversation_only_is_not_consolidated(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I prefer aisle seats.")
    conv.append("user", "I prefer aisle seats, really.")
    assert _consolidate(memory, alice) == {}
    (proposal,) = _proposals(alice)
    assert alice.memories.evidence(proposal.id) == [proposal.source_message_id]


def test_small_talk_never_becomes_a_proposal(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    _say(
        alice,
        "Remember when we went to Porto?",
        "Remember when we went to Porto? Fun times!",
        "Do you remember the time we went to Porto?",
        "remember when we went to porto",
    )
    assert _consolidate(memory, alice) == {}
    assert alice.memories.list(status=None) == []
    assert Worker(memory).queue_consolidation() == 0  # nothing to consolidate: no job


def test_a_known_memory_takes_the_evidence_and_nothing_is_proposed(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    kept = alice.remember("I am vegetarian.").memory
    assert kept is not None
    ids = _say(alice, "I am a vegetarian.", "I am vegetarian.")
    for proposal in _proposals(alice):  # the inline suggestions, declined
        alice.memories.reject(proposal.id)
    assert _consolidate(memory, alice) == {}  # declined turns are not read again
    assert not set(ids) & set(alice.memories.evidence(kept.id))
    more = _say(alice, "I am vegetarian!", "I am a vegetarian, strictly.")
    report = _consolidate(memory, alice)
    assert report.get("proposed") is None and report["evidenced"] == 1
    assert _proposals(alice) == []  # the suggestions made as the user spoke merged into it
    assert set(more) <= set(alice.memories.evidence(kept.id))


def test_confirming_merges_near_duplicates_and_the_audit_says_so(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    older = alice.remember("I love hiking in mountains.").memory
    one = alice.propose("I love hiking in the mountains on weekends.").memory
    two = alice.propose("I really love hiking in the mountains.").memory
    other = alice.propose("I prefer aisle seats.").memory
    assert older and one and two and other
    confirmed = alice.memories.confirm(one.id)
    assert confirmed.status == "confirmed" and confirmed.supersedes_id == older.id
    assert alice.memories.get(older.id).status == "superseded"
    assert {m.id for m in _proposals(alice)} == {other.id}  # the duplicate merged, not the seat
    merged = {e.object_id: e.details for e in alice.audit() if e.action == "memory.merged"}
    assert merged == {two.id: {"into": one.id}, older.id: {"into": one.id}}
    assert alice.memories.delete(one.id) == [one.id, older.id]  # no copy left behind
    assert alice.memories.list(status=None) == [alice.memories.get(other.id)]


def test_stale_proposals_expire_and_a_cap_holds(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    for i in range(5):
        alice.propose(f"I collect stamps from country number {i}.")
    report = _consolidate(memory, alice, max_proposals=3)
    assert report == {"expired": 2}
    assert len(_proposals(alice)) == 3
    capped = [e for e in alice.audit() if e.action == "memory.proposal_expired"]
    assert [e.details["reason"] for e in capped] == ["cap", "cap"]
    assert _consolidate(memory, alice, days=31, proposal_ttl_days=30) == {"expired": 3}
    assert _proposals(alice) == []
    # a new repeated statement is not proposed beyond the cap
    for i in range(2):
        alice.propose(f"I keep bees in hive {i}.")
    _say(alice, "I prefer aisle seats.", "I prefer aisle seats on trains.")
    for proposal in _proposals(alice):
        if "aisle" in proposal.text:
            alice.memories.delete(proposal.id)
    assert _consolidate(memory, alice, max_proposals=2) == {"capped": 1}


def test_deleting_a_turn_takes_it_out_of_the_evidence(memory: convmem.Memory) -> None:
    """A proposal goes with any turn it was drawn from (issue 30: what the user deleted must not
    come back as a suggestion); a memory the user confirmed stays, its evidence without the
    deleted turn. The turns left may be proposed again, from what they say alone."""
    alice = memory.scope("acme", "alice")
    texts = ("I prefer aisle seats.", "I prefer aisle seats on trains.",
             "I prefer aisle seats, always.")  # fmt: skip
    ids = _say(alice, *texts)
    _consolidate(memory, alice)
    (proposal,) = _proposals(alice)
    assert set(alice.memories.evidence(proposal.id)) == set(ids)
    alice.conversation(alice.message(ids[0]).conversation_id).delete()
    assert _proposals(alice) == []
    with pytest.raises(convmem.NotFound):
        alice.memories.get(proposal.id)

    _consolidate(memory, alice)  # the two turns left still say it
    (again,) = _proposals(alice)
    assert set(alice.memories.evidence(again.id)) == set(ids[1:])
    kept = alice.memories.confirm(again.id)
    alice.conversation(alice.message(ids[1]).conversation_id).delete()
    assert alice.memories.get(kept.id).text == kept.text
    assert alice.memories.evidence(kept.id) == [ids[2]]
    alice.delete_all()
    exported = alice.export()["data"]
    assert exported.get("memory_evidence", []) == []


def test_memory_switched_off_consolidates_nothing(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    _say(alice, "I prefer aisle seats.", "I prefer aisle seats on trains.")
    for proposal in _proposals(alice):
        alice.memories.delete(proposal.id)
    alice.set_memory_enabled(False)
    assert _consolidate(memory, alice) == {"closed": "memory_off"}
    assert alice.memories.list(status=None) == []
