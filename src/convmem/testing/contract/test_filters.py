"""Filters come before ranking (DESIGN principle 10): what a search may not return is never a
candidate. Each test hides one weak match among strong matches that the filters exclude — then
even ``k=1`` must find the weak one; a filter applied after taking the top k would return
nothing (or the wrong row)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.testing.harness import Backend

STRONG = "Lantern, lantern: the lantern and the lantern lamp."
WEAK = "I keep a small lantern by the blue door of the cottage."
AT = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["lexical", "hybrid"])
def searching(request: pytest.FixtureRequest, backend: Backend) -> Iterator[convmem.Memory]:
    embedder = convmem.HashingEmbedder() if request.param == "hybrid" else None
    with backend.open(embedder=embedder) as memory:
        yield memory


def test_memories_not_current_or_not_the_principals_are_never_ranked(
    searching: convmem.Memory,
) -> None:
    alice = searching.scope("acme", "alice")
    past = datetime.now(UTC) - timedelta(days=1)
    assert alice.remember(STRONG, subject="expired", expires_at=past).status == "saved"
    superseded = alice.remember(STRONG, subject="home").memory
    city = alice.remember("I moved to the city.", subject="home").memory
    assert city is not None
    rejected = alice.propose(STRONG + " Rejected.", subject="rejected").memory
    assert rejected is not None
    alice.memories.reject(rejected.id)
    assert alice.propose(STRONG + " Pending.", subject="pending").status == "proposed"
    alice.remember(STRONG, subject="project", scope="project:apollo")
    searching.scope("acme", "bob").remember(STRONG)
    searching.scope("globex", "alice").remember(STRONG)
    weak = alice.remember(WEAK, subject="door").memory
    assert weak is not None and superseded is not None
    assert alice.memories.get(superseded.id).status == "superseded"

    assert [h.memory.id for h in alice.search_memories("lantern", k=1)] == [weak.id]
    # recall into a request applies the same filters: the user's current memories, only them
    ctx = alice.create_conversation().assemble("Where is the lantern lamp?")
    assert sorted(ctx.report.memory_ids) == sorted([weak.id, city.id])
    assert [h.memory.id for h in alice.search_memories("lantern lamp", k=50)] == [weak.id]
    # the project's memory is a candidate only when its scope is asked for
    in_project = alice.search_memories("lantern lamp", k=50, scope="project:apollo")
    assert len(in_project) == 2 and weak.id in {h.memory.id for h in in_project}


def test_turns_of_other_conversations_and_principals_are_never_ranked(
    searching: convmem.Memory,
) -> None:
    alice = searching.scope("acme", "alice")
    mine = alice.create_conversation()
    mine.append("user", "Tell me about the cottage.", created_at=AT)
    weak = mine.append("assistant", WEAK, created_at=AT + timedelta(minutes=1))
    for scope in (alice, searching.scope("acme", "bob"), searching.scope("globex", "alice")):
        other = scope.create_conversation()
        for i in range(5):
            other.append("user", STRONG, created_at=AT + timedelta(minutes=i))
    assert [h.message.id for h in mine.search("lantern", k=1)] == [weak.id]
    assert {h.message.id for h in mine.search("lantern lamp", k=50)} <= {weak.id, weak.parent_id}


def test_turns_outside_since_until_are_never_ranked(searching: convmem.Memory) -> None:
    conv = searching.scope("acme", "alice").create_conversation()
    before = conv.append("user", STRONG, created_at=AT)
    weak = conv.append("assistant", WEAK, created_at=AT + timedelta(hours=1, minutes=30))
    at_until = conv.append("user", STRONG, created_at=AT + timedelta(hours=3))
    since, until = AT + timedelta(hours=1), AT + timedelta(hours=3)
    assert [h.message.id for h in conv.search("lantern", k=1, since=since, until=until)] == [
        weak.id
    ]
    assert [h.message.id for h in conv.search("lantern lamp", k=50, since=since, until=until)] == [
        weak.id
    ]
    # the bounds: since is inclusive, until exclusive
    assert [
        h.message.id for h in conv.search("lamp", k=50, since=AT, until=AT + timedelta(hours=1))
    ] == [before.id]
    assert {h.message.id for h in conv.search("lamp", k=50, since=until)} == {at_until.id}
