"""Proposals with a life cycle (issue 36, item 4), on every backend: each carries a confidence and
why it was proposed (stored, exported); the retention layer ``proposals`` expires the ones nobody
confirmed within the tenant's period — also of a user who stopped writing; a tenant's cap keeps
at most N pending per user, the least confident giving way to a new one at least as confident."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.errors import InvalidInput
from convmem.testing.contract.test_consolidation import _consolidate


def test_each_proposal_says_how_sure_and_why(memory: convmem.Memory, alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    seats = conv.append("user", "I prefer window seats on long flights.").notices[0].memory
    loose = conv.append("user", "I enjoy sci-fi novels.").notices[0].memory
    assert seats is not None and loose is not None
    assert (seats.basis, seats.confidence) == ("statement", 0.6)  # a named slot
    assert (loose.basis, loose.confidence) == ("statement", 0.4)
    app = alice.propose("Prefers Python examples", confidence=0.9).memory
    default = alice.propose("Likes jazz").memory
    assert app is not None and default is not None
    assert (app.basis, app.confidence) == ("application", 0.9)
    assert (default.basis, default.confidence) == ("application", 0.5)
    with pytest.raises(InvalidInput):
        alice.propose("Likes tea", confidence=1.5)
    # said in two conversations: proposed once as a statement, consolidation finds it said
    # again and the proposal is surer, with that reason
    first = alice.create_conversation().append("user", "I love hiking in the mountains.")
    assert [(n.memory.basis, n.memory.confidence) for n in first.notices if n.memory] == [
        ("statement", 0.4)
    ]
    alice.create_conversation().append("user", "I love hiking in mountains on weekends.")
    _consolidate(memory, alice)
    (repeated,) = [m for m in alice.memories.list(status="proposed") if "hiking" in m.text]
    assert (repeated.basis, repeated.confidence) == ("repeated", 0.75)
    # stored as said, exported, and gone from a memory the user states themselves
    stored = {m.id: m for m in alice.memories.list(status="proposed")}
    assert stored[app.id].confidence == 0.9 and stored[seats.id].basis == "statement"
    exported = {m["id"]: m for m in alice.export()["data"]["memories"]}
    assert (exported[app.id]["confidence"], exported[app.id]["basis"]) == (0.9, "application")
    saved = alice.remember("I prefer aisle seats.").memory
    assert saved is not None and (saved.confidence, saved.basis) == (None, None)
    confirmed = alice.memories.confirm(app.id)
    assert confirmed.confidence == 0.9  # what it was proposed with stays with it


def test_retention_expires_proposals_nobody_confirmed(
    memory: convmem.Memory, alice: convmem.Scope, bob: convmem.Scope
) -> None:
    # alice writes, proposes and then stops writing; bob's proposal is fresh
    pending = alice.propose("Likes jazz").memory
    kept = alice.remember("I prefer aisle seats.").memory
    declined = alice.propose("Likes opera").memory
    assert pending is not None and kept is not None and declined is not None
    alice.memories.reject(declined.id)
    policy = memory.set_tenant_policy("acme", retention={"proposals": 14})
    assert policy.retention.proposals == 14
    now = datetime.now(UTC)
    assert memory.sweep_retention("acme", now=now + timedelta(days=13)) == {
        "acme": {"proposals": 0}
    }
    assert alice.memories.get(pending.id).status == "proposed"
    later = now + timedelta(days=15)
    bob_pending = bob.propose("Likes chess").memory
    assert bob_pending is not None
    swept = memory.sweep_retention("acme", now=later)
    assert swept == {"acme": {"proposals": 2}}  # alice's and bob's: both older than 14 days then
    with pytest.raises(convmem.NotFound):
        alice.memories.get(pending.id)
    # what the user said or declined is no proposal: the layer leaves it
    assert alice.memories.get(kept.id).status == "confirmed"
    assert alice.memories.get(declined.id).status == "rejected"
    events = [e for e in alice.audit() if e.object_id == pending.id]
    assert events[-1].action == "memory.proposal_expired"
    assert events[-1].actor == "retention" and events[-1].details["retention_days"] == 14
    # idempotent: the same sweep again deletes nothing
    assert memory.sweep_retention("acme", now=later) == {"acme": {"proposals": 0}}


def test_a_proposal_changed_recently_waits_its_whole_period(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    memory.set_tenant_policy("acme", retention={"proposals": 14})
    fresh = alice.propose("Likes jazz").memory
    assert fresh is not None
    assert memory.sweep_retention("acme")["acme"] == {"proposals": 0}
    assert alice.memories.get(fresh.id).status == "proposed"


def test_at_most_n_pending_the_least_confident_gives_way(
    memory: convmem.Memory, alice: convmem.Scope, bob: convmem.Scope
) -> None:
    memory.set_tenant_policy("acme", max_pending_proposals=2)
    low = alice.propose("Likes jazz", confidence=0.3).memory
    high = alice.propose("Likes opera", confidence=0.8).memory
    assert low is not None and high is not None
    # a third at least as confident as the weakest replaces it
    third = alice.propose("Likes chess", confidence=0.3).memory
    assert third is not None
    pending = {m.id for m in alice.memories.list(status="proposed")}
    assert pending == {high.id, third.id}
    dropped = [e for e in alice.audit() if e.object_id == low.id][-1]
    assert (dropped.action, dropped.details["reason"]) == ("memory.proposal_dropped", "cap")
    # a weaker one is not made
    weak = alice.propose("Likes tea", confidence=0.1)
    assert (weak.status, weak.reason, weak.memory) == ("blocked", "proposal_cap", None)
    with pytest.raises(convmem.NeverStoreViolation):
        alice.propose("Likes tea", confidence=0.1, strict=True)
    # a heuristic proposal from a turn meets the same cap (0.6 for a named slot)
    said = alice.create_conversation().append("user", "I prefer window seats.")
    assert [n.status for n in said.notices] == ["proposed"]
    assert len(alice.memories.list(status="proposed")) == 2
    # what the user asks for themselves is never capped, and the cap is per user
    assert alice.remember("I speak Portuguese.").status == "saved"
    for n in range(3):
        assert bob.propose(f"Likes sport number {n}", confidence=0.5).status == "proposed"
    assert len(bob.memories.list(status="proposed")) == 2
    # no cap: nothing gives way
    memory.set_tenant_policy("acme")
    assert alice.propose("Likes tea", confidence=0.1).status == "proposed"
    assert len(alice.memories.list(status="proposed")) == 3
