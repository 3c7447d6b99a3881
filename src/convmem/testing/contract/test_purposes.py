"""Purpose (issue 15 item 4): every memory carries one of ``convmem.PURPOSES``; a request declares
the purposes it may use, and recall and search filter on them in the store's query, before
ranking — on every backend. Each filter test hides one weak match among strong matches of another
purpose: with ``k=1`` only a filter applied before ranking finds the weak one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

import convmem
from convmem.model.principal import Principal
from convmem.testing.harness import Backend

STRONG = "Lantern, lantern: the lantern and the lantern lamp."
WEAK = "I keep a small lantern by the blue door of the cottage."
PERSONAL = ["personalization"]


@pytest.fixture(params=["lexical", "hybrid"])
def searching(request: pytest.FixtureRequest, backend: Backend) -> Iterator[convmem.Memory]:
    embedder = convmem.HashingEmbedder() if request.param == "hybrid" else None
    with backend.open(embedder=embedder) as memory:
        yield memory


def _strong_automation_weak_personal(alice: convmem.Scope) -> tuple[str, list[str]]:
    strong = []
    for i in range(4):
        saved = alice.remember(f"{STRONG} {i}", subject=f"lamp {i}", purpose="task_automation")
        assert saved.memory is not None and saved.memory.purpose == "task_automation"
        strong.append(saved.memory.id)
    weak = alice.remember(WEAK, subject="door").memory
    assert weak is not None and weak.purpose == "personalization"  # the default
    return weak.id, strong


def test_search_filters_on_purpose_before_ranking(searching: convmem.Memory) -> None:
    alice = searching.scope("acme", "alice")
    weak, strong = _strong_automation_weak_personal(alice)
    assert [h.memory.id for h in alice.search_memories("lantern", k=1, purposes=PERSONAL)] == [weak]
    assert [h.memory.id for h in alice.memories.search("lantern lamp", 50, purposes=PERSONAL)] == [
        weak
    ]
    only_tasks = alice.search_memories("lantern lamp", k=50, purposes=["task_automation"])
    assert sorted(h.memory.id for h in only_tasks) == sorted(strong)
    # declaring nothing: every purpose (what an application that never names one expects)
    assert len(alice.search_memories("lantern lamp", k=50)) == 5
    # declaring none at all: no memory
    assert alice.search_memories("lantern lamp", k=50, purposes=[]) == []


def test_the_store_rankings_filter_on_purpose_in_their_query(searching: convmem.Memory) -> None:
    alice = searching.scope("acme", "alice")
    weak, _ = _strong_automation_weak_personal(alice)
    assert searching.wait_for_vectors(30)  # vectors are filled after the write
    now = datetime.now(UTC)
    with searching.store.read() as tx:
        lexical = tx.search_memory_terms(
            "acme", "alice", ["lantern"], scopes=["user"], purposes=PERSONAL, now=now, limit=1
        )
        assert [hit.record.id for hit in lexical] == [weak]
        assert (
            tx.search_memory_terms(
                "acme", "alice", ["lantern"], scopes=["user"], purposes=[], now=now, limit=5
            )
            == []
        )
        listed = tx.list_memories("acme", "alice", purposes=PERSONAL)
        assert [m.id for m in listed] == [weak]
        assert tx.list_memories("acme", "alice", purposes=[]) == []
        if searching.embedder is not None:
            vector = searching.embedder.embed([STRONG])[0]
            nearest = tx.nearest_memories(
                "acme", "alice", searching.embedder.name, vector, scopes=["user"],
                purposes=PERSONAL, now=now, limit=1,
            )  # fmt: skip
            assert [hit.record.id for hit in nearest] == [weak]


@pytest.mark.parametrize("memory_k", [32, 1], ids=["whole-set", "ranked"])
def test_assembly_recalls_only_the_declared_purposes(
    searching: convmem.Memory, memory_k: int
) -> None:
    """The block (the whole set, or its most recent when larger) and the memories ranked for
    the message both read through the purpose filter."""
    alice = searching.scope("acme", "alice")
    weak, strong = _strong_automation_weak_personal(alice)
    tea = alice.remember("I like green tea.", subject="tea").memory
    assert tea is not None
    conv = alice.create_conversation()
    options = convmem.AssemblyOptions(memory_k=memory_k)
    ctx = conv.assemble("Where is the lantern lamp?", options=options, purposes=PERSONAL)
    # ranked: the block holds the most recent (tea) and the lantern note is ranked for the message
    assert sorted(ctx.report.memory_ids) == sorted([weak, tea.id])
    assert "lamp 0" not in str(ctx.system) + str(ctx.messages)
    every = conv.assemble("Where is the lantern lamp?", options=options)
    assert set(every.report.memory_ids) & set(strong)
    nothing = conv.assemble("Where is the lantern lamp?", options=options, purposes=[])
    assert list(nothing.report.memory_ids) == []


def test_a_scope_caps_the_purposes_its_calls_may_declare(memory: convmem.Memory) -> None:
    owner = memory.scope("acme", "alice")
    weak, _ = _strong_automation_weak_personal(owner)
    capped = memory.scope("acme", "alice", purposes=PERSONAL)
    assert capped.principal == Principal("acme", "alice", "user:alice", ("personalization",))
    # declaring nothing: the cap
    assert [h.memory.id for h in capped.search_memories("lantern lamp", k=50)] == [weak]
    conv = capped.create_conversation()
    assert list(conv.assemble("Where is the lantern lamp?").report.memory_ids) == [weak]
    # asking for more than the cap is refused, not silently cut
    with pytest.raises(convmem.PurposeNotAllowed) as refused:
        capped.search_memories("lamp", purposes=["personalization", "task_automation"])
    assert refused.value.purposes == ["task_automation"]
    with pytest.raises(convmem.PurposeNotAllowed):
        conv.assemble("Where is the lamp?", purposes=["task_automation"])


@pytest.mark.parametrize(
    "declared", ["personalization", ["advertising"], [None], 7], ids=["a-string", "unknown",
                                                                     "none", "a-number"]
)  # fmt: skip
def test_a_malformed_declaration_is_refused(memory: convmem.Memory, declared: object) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember("I like tea.")
    with pytest.raises(convmem.InvalidInput):
        alice.search_memories("tea", purposes=declared)  # type: ignore[arg-type]
    with pytest.raises(convmem.InvalidInput):
        alice.create_conversation().assemble("tea?", purposes=declared)  # type: ignore[arg-type]
    with pytest.raises(convmem.InvalidInput):
        memory.scope("acme", "alice", purposes=declared)  # type: ignore[arg-type]


def test_a_memory_purpose_is_one_of_the_set_and_project_only_needs_a_project(
    memory: convmem.Memory, backend: Backend
) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation()
    before = backend.fingerprint()
    for bad in ("advertising", "Personalization", ""):
        with pytest.raises(convmem.InvalidInput):
            alice.remember("I like tea.", purpose=bad)
    with pytest.raises(convmem.InvalidInput, match="project"):
        alice.remember("The repo uses tabs.", purpose="project_only")
    assert backend.fingerprint() == before
    saved = alice.remember("The repo uses tabs.", purpose="project_only", scope="project:apollo")
    assert saved.memory is not None
    assert alice.memories.get(saved.memory.id).purpose == "project_only"
    assert set(convmem.PURPOSES) == {"personalization", "task_automation", "project_only"}
