"""Hybrid search on real SQLite: ranking, scope isolation, hostile queries, the retrieved slot of
assembly, backfill. (Deletion from the indexes and their rebuild, read in SQLite's own tables:
``tests/store/sqlite/test_search_rows.py``.)"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import convmem
from convmem import HashingEmbedder, SearchOptions
from convmem.model.messages import Role
from convmem.retrieval.vector import Matrix

SMALL = convmem.ModelProfile(context_window=700, max_output=100, tokenizer="o200k_base")

FILLER = [
    "Let's talk about the weather this week, it has been rainy and grey.",
    "I watched a documentary about deep sea creatures last night.",
    "The office coffee machine broke again this morning.",
    "We should plan the quarterly report outline soon.",
    "My neighbour keeps practising the trumpet at odd hours.",
    "The train was delayed by twenty minutes today.",
]


@pytest.fixture
def mem(db_path: Path) -> Iterator[convmem.Memory]:
    with convmem.open(db_path, embedder=HashingEmbedder()) as m:
        yield m


def chat(conv: convmem.Conversation, lines: list[str], start: datetime | None = None) -> list[str]:
    at = start or datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    ids = []
    for i, line in enumerate(lines):
        role: Role = "user" if i % 2 == 0 else "assistant"
        ids.append(conv.append(role, line, created_at=at + timedelta(minutes=i)).id)
    return ids


def history(secret: str) -> list[str]:
    lines = [FILLER[i % len(FILLER)] + f" (note {i})" for i in range(40)]
    lines[4] = f"My locker code at the gym is {secret}, by the way."
    lines[5] = "Noted, I will remember the locker code."
    return lines


# --- ranking ------------------------------------------------------------------------------------


def test_search_ranks_the_turn_that_answers_with_scores_and_retrievers(
    mem: convmem.Memory,
) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    ids = chat(conv, history("4471"))
    hits = conv.search("what is my gym locker code?", k=5)
    assert hits[0].message.id in (ids[4], ids[5])
    assert ids[4] in [h.message.id for h in hits[:2]]
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert "lexical" in hits[0].retrievers and "vector" in hits[0].retrievers
    lexical_only = conv.search("locker", k=5, options=SearchOptions(retrievers=("lexical",)))
    # the two turns that say it, then their neighbours through the context column
    assert {h.message.id for h in lexical_only[:2]} == {ids[4], ids[5]}
    assert {h.message.id for h in lexical_only} == set(ids[3:7])
    assert all(h.retrievers == ("lexical",) for h in lexical_only)


def test_neighbour_context_finds_the_reply_to_a_question(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    ids = chat(conv, ["Which bakery sells the best sourdough?", "Try Hofmann on Elm Street."])
    hits = conv.search("sourdough", k=2, options=SearchOptions(retrievers=("lexical",)))
    # the question matches on its own words; the answer through its neighbour, ranked below
    assert [h.message.id for h in hits] == [ids[0], ids[1]]


def test_neighbour_lift_raises_turns_next_to_strong_hits(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    ids = chat(conv, history("4471"))
    query = "what is my gym locker code?"
    plain = conv.search(query, k=len(ids), options=SearchOptions(neighbour_lift=0.0))
    lifted = conv.search(query, k=len(ids), options=SearchOptions(neighbour_lift=0.25))
    before = {h.message.id: h.score for h in plain}
    assert {h.message.id for h in lifted} == set(before)
    for hit in lifted:
        i = ids.index(hit.message.id)
        near = max(before.get(ids[j], 0.0) for j in (i - 1, i + 1) if 0 <= j < len(ids))
        assert hit.score == pytest.approx(before[hit.message.id] + 0.25 * near)
    assert [h.score for h in lifted] == sorted((h.score for h in lifted), reverse=True)
    with pytest.raises(convmem.InvalidInput):
        SearchOptions(neighbour_lift=-0.1)


def test_speaker_names_come_from_metadata_and_date_filters_apply(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    day1 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    a = conv.append("user", "I went hiking", metadata={"name": "Caroline"}, created_at=day1)
    b = conv.append(
        "assistant", "I went hiking too", metadata={"name": "Melanie"},
        created_at=day1 + timedelta(days=30),
    )  # fmt: skip
    hits = conv.search("Where did Melanie go hiking?", k=2)
    assert hits[0].message.id == b.id  # the named speaker's turn first
    later = conv.search("hiking", k=5, since=day1 + timedelta(days=1))
    assert [h.message.id for h in later] == [b.id]
    earlier = conv.search("hiking", k=5, until=day1 + timedelta(days=1))
    assert [h.message.id for h in earlier] == [a.id]


def test_tool_results_are_not_searched(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "look up the zanzibar ferry")
    conv.append("assistant", "", tool_calls=[convmem.ToolCall(id="c1", name="search")])
    conv.append("tool", "zanzibar ferry timetable: 07:00, 12:00", tool_call_id="c1")
    hits = conv.search("zanzibar timetable", k=10)
    assert all(h.message.role != "tool" for h in hits)


def test_memory_search_is_hybrid_and_filtered(mem: convmem.Memory) -> None:
    alice = mem.scope("acme", "alice")
    alice.remember("I prefer aisle seats on long flights.")
    alice.remember("My favourite cuisine is Ethiopian.")
    hits = alice.search_memories("aisle seat", k=5)
    assert hits[0].memory.text.startswith("I prefer aisle seats")
    assert set(hits[0].retrievers) == {"lexical", "vector"}
    assert all(h.memory.user_id == "alice" for h in hits)


# --- scope isolation ----------------------------------------------------------------------------


def test_two_users_with_near_identical_histories_never_see_each_other(
    mem: convmem.Memory, db_path: Path
) -> None:
    alice, bob = mem.scope("acme", "alice"), mem.scope("acme", "bob")
    other_tenant = mem.scope("globex", "alice")  # the same user id in another tenant
    convs = {}
    for who, secret in ((alice, "1111"), (bob, "2222"), (other_tenant, "3333")):
        conv = who.create_conversation(title="Gym")
        chat(conv, history(secret))
        assert who.remember(f"My favourite bus line is {secret}.").status == "saved"
        convs[(who.tenant, who.user)] = conv
    for who, secret in ((alice, "1111"), (bob, "2222"), (other_tenant, "3333")):
        conv = convs[(who.tenant, who.user)]
        hits = conv.search("locker code 1111 2222 3333", k=50)
        assert hits
        owned = {m.id for m in conv.messages()}
        assert {h.message.id for h in hits} <= owned
        text = json.dumps([h.message.content for h in hits])
        assert secret in text
        assert not {"1111", "2222", "3333"} - {secret} & set(text.replace('"', " ").split())
        memories = who.search_memories("locker code 1111 2222 3333", k=10)
        assert [m.memory.text for m in memories] == [f"My favourite bus line is {secret}."]
        ctx = conv.assemble("What is my locker code?", model=SMALL)
        request = json.dumps(ctx.messages)
        for other in {"1111", "2222", "3333"} - {secret}:
            assert other not in request
    with pytest.raises(convmem.NotFound):
        bob.conversation(convs[("acme", "alice")].id)


# --- deletion: src/convmem/testing/contract/test_deletion.py (every backend); the SQLite index
# tables: tests/store/sqlite/test_search_rows.py


# --- hostile queries ----------------------------------------------------------------------------

HOSTILE = [
    "", "   ", '"', '""', "'", "(", ")", "*", "a*", "^start", "NEAR(a b)", "NEAR(a b, 3)",
    "a AND", "OR", "NOT x", "AND OR NOT", "body:secret", "{body ctx}: x", "scope : x",
    "owner:alice", "-x", "+", "a + b", "\\", "%", "_", "日本語の質問", "🦜🦜", "naïve café",
    "x" * 5000, "\u200b", "a\nb\tc", "rowid = 1; DROP TABLE messages", "'; --",
]  # fmt: skip


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_searched_as_text(mem: convmem.Memory, query: str) -> None:
    alice = mem.scope("acme", "alice")
    conv = alice.create_conversation()
    chat(conv, ["NEAR(alpha beta) is FTS syntax", "body:secret and {body ctx} too", "日本語の質問"])
    alice.remember("NEAR(alpha beta) in a memory")
    conv.search(query, k=5)
    alice.search_memories(query, k=5)
    conv.assemble(query.strip() or "?", model=convmem.ModelProfile(context_window=8192))


def test_operators_are_matched_as_words(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    ids = chat(conv, ["NEAR(alpha beta) is FTS syntax", "unrelated words entirely", "x y z"])
    hits = conv.search("NEAR(alpha beta)", k=1, options=SearchOptions(retrievers=("lexical",)))
    assert [h.message.id for h in hits] == [ids[0]]


def test_bad_arguments_raise_invalid_input(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    with pytest.raises(convmem.InvalidInput):
        conv.search("x", k=0)
    with pytest.raises(convmem.InvalidInput):
        SearchOptions(retrievers=("telepathy",))


# --- the retrieved slot -------------------------------------------------------------------------


def test_retrieved_slot_brings_back_an_evicted_turn(mem: convmem.Memory) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    ids = chat(conv, history("4471"))
    ctx = conv.assemble("What was my gym locker code again?", model=SMALL)
    report = ctx.report
    assert ids[4] in report.evicted_ids or report.evicted_count > 4
    assert ids[4] in report.retrieved_ids
    assert not set(report.retrieved_ids) & set(report.included_ids)  # never the window twice
    assert report.sections["retrieved"] > 0
    assert report.total_tokens <= SMALL.input_budget
    retrieved = [m for m in ctx.messages if "<retrieved_history>" in str(m["content"])]
    assert len(retrieved) == 1
    text = str(retrieved[0]["content"])
    assert "4471" in text and "2024-03-01 09:04" in text and "not instructions" in text
    # the order of the request: history, then retrieved, then the user message
    assert ctx.messages[-1]["content"] == "What was my gym locker code again?"
    assert ctx.messages[-2] is retrieved[0]
    anthropic = conv.assemble("What was my gym locker code again?", model=SMALL, format="anthropic")
    assert anthropic.report.retrieved_ids == report.retrieved_ids


def test_retrieved_slot_holds_one_of_near_duplicate_turns(mem: convmem.Memory) -> None:
    """A question asked again and again (other numbers each time) and an answer given from the same
    template are one turn to the retrieved section; the distinct evidence still comes back."""
    conv = mem.scope("acme", "alice").create_conversation()
    lines = history("4471")
    for i in range(6, 20, 2):  # evicted turns that repeat one another, with other numbers
        lines[i] = f"Status check {i}: is the gym locker still free at {1000 + 7 * i} on floor {i}?"
        lines[i + 1] = f"The gym locker {i} at {1000 + 7 * i} is free on floor {i}; I checked it."
    ids = chat(conv, lines)
    roomy = convmem.AssemblyOptions(retrieved_share=0.5)  # room for every repeat
    question = "Is the gym locker still free, and what was my locker code?"
    report = conv.assemble(question, model=SMALL, options=roomy).report
    assert ids[4] in report.retrieved_ids  # the evidence
    repeats = [ids[i] for i in range(6, 20)]
    assert not set(repeats) & set(report.included_ids)  # all of them evicted
    taken = [i for i in report.retrieved_ids if i in repeats]
    assert len(taken) == 2  # one of the questions and one of the answers


@pytest.mark.parametrize("window_says", ["same", "other"])
def test_a_turn_the_window_repeats_is_not_retrieved(mem: convmem.Memory, window_says: str) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    lines = history("4471")
    lines[6] = "The deploy key for the orders API rotates every Monday at 09:00 UTC."
    lines[36] = (  # in the window: the same statement, changed, or an unrelated one
        "The deploy key for the orders API rotates every Monday at 10:00 UTC."
        if window_says == "same"
        else "The quarterly report outline is due next Friday."
    )
    ids = chat(conv, lines)
    report = conv.assemble(
        "When does the deploy key for the orders API rotate?", model=SMALL
    ).report
    assert ids[36] in report.included_ids and ids[6] not in report.included_ids
    assert (ids[6] in report.retrieved_ids) is (window_says == "other")


def test_retrieval_off_and_short_conversations_leave_the_slot_empty(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, history("4471"))
    off = conv.assemble("locker code?", model=SMALL,
                        options=convmem.AssemblyOptions(retrieved_share=0))  # fmt: skip
    assert off.report.retrieved_ids == [] and off.report.sections["retrieved"] == 0
    short = alice.create_conversation()
    chat(short, ["my locker code is 12", "ok"])
    ctx = short.assemble("locker code?", model=SMALL)
    assert ctx.report.retrieved_ids == [] and ctx.report.evicted_count == 0


def test_retrieved_turns_come_from_the_active_branch_only(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    ids = chat(conv, history("4471"))
    conv.edit(ids[4], "My locker code at the gym is 8080 now.")  # a new branch from message 3
    chat(conv, [FILLER[i % len(FILLER)] + f" (again {i})" for i in range(36)])
    ctx = conv.assemble("What is my gym locker code?", model=SMALL)
    branch = {m.id for m in conv.branch()}
    assert set(ctx.report.retrieved_ids) <= branch
    assert ids[4] not in ctx.report.retrieved_ids
    assert "8080" in json.dumps(ctx.messages)


def test_block_eviction_keeps_the_prefix_with_retrieval(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, history("4471"))
    hashes = set()
    for i in range(4):
        ctx = conv.assemble(f"question {i} about the locker?", model=SMALL)
        hashes.add(ctx.report.stable_prefix_hash)
        conv.append("user", f"short turn {i}")
        conv.append("assistant", "ok")
    assert len(hashes) == 1


# --- backfill and rebuild -----------------------------------------------------------------------


def test_backfill_embeds_what_was_written_without_vectors(db_path: Path) -> None:
    config = convmem.Config(embed_on_write=False)
    with convmem.open(db_path, config=config, embedder=HashingEmbedder()) as mem:
        alice = mem.scope("acme", "alice")
        conv = alice.create_conversation()
        chat(conv, history("4471"))
        alice.remember("I like quokkas.")
        assert all("vector" not in h.retrievers for h in conv.search("locker", k=3))
        counts = mem.backfill_embeddings()
        assert counts["messages"] == 40 and counts["terms"] > 0 and counts["memories"] == 1
        assert any("vector" in h.retrievers for h in conv.search("locker", k=3))
        assert mem.backfill_embeddings() == {"messages": 0, "terms": 0, "memories": 0}


def test_a_budget_without_room_for_the_retrieved_section_still_assembles(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    chat(conv, history("4471"))
    tight = convmem.ModelProfile(context_window=300, max_output=50, tokenizer="o200k_base")
    question = "locker code? " + "please answer in detail " * 12
    options = convmem.AssemblyOptions(retrieved_share=0.9, memory_share=0.05)
    ctx = conv.assemble(question, model=tight, options=options)
    assert ctx.report.total_tokens <= tight.input_budget


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


def test_assembly_embeds_the_new_message_once(db_path: Path) -> None:
    embedder = CountingEmbedder()
    with convmem.open(db_path, embedder=embedder) as mem:
        alice = mem.scope("acme", "alice")
        alice.remember("I keep my gym things in locker 12.")
        conv = alice.create_conversation()
        ids = chat(conv, history("4471"))
        question = "What was my gym locker code again?"
        embedder.texts.clear()
        roomy = convmem.AssemblyOptions(memory_share=0.3)
        ctx = conv.assemble(question, model=SMALL, options=roomy)
        # both rankings used it: the memory slot and the retrieved turns
        assert ctx.report.memory_ids and ids[4] in ctx.report.retrieved_ids
        assert embedder.texts.count(question) == 1


def test_a_query_word_the_tenant_already_holds_is_not_embedded_again(db_path: Path) -> None:
    with convmem.open(db_path, embedder=HashingEmbedder()) as mem:
        chat(mem.scope("acme", "alice").create_conversation(), ["I took up pottery.", "Nice!"])
        conv = mem.scope("acme", "bob").create_conversation()
        chat(conv, FILLER)
    embedder = CountingEmbedder()  # a new process: nothing cached in memory
    with convmem.open(db_path, embedder=embedder) as mem:
        conv = mem.scope("acme", "bob").conversation(conv.id)
        conv.search("pottery classes", k=3)
        assert "pottery" not in embedder.texts  # the tenant's stored vector served
        assert "classes" in embedder.texts  # a word no one used goes to the model


def test_late_memories_do_not_move_the_window_retrieval_held(mem: convmem.Memory) -> None:
    alice = mem.scope("acme", "alice")
    for text in ("My gym is the big one downtown, next to the old train station and the river.",
                 "My gym locker is the one in the second row by the window, near the showers.",
                 "I train at the gym on Mondays and Thursdays before work, around seven.",
                 "I prefer aisle seats.", "My sister lives in Oslo."):  # fmt: skip
        alice.remember(text)
    conv = alice.create_conversation()
    # each turn its own (distinct words), so that none is a near-duplicate of another
    tags = [" ".join(f"tag{i}x{j}" for j in range(12)) for i in range(60)]
    chat(conv, [f"The gym locker note {i}: {FILLER[i % len(FILLER)]} {tags[i]}" for i in range(60)])
    question = "What was my gym locker code again?"
    windows = []
    profile = convmem.ModelProfile(context_window=1500, max_output=100, tokenizer="o200k_base")
    for k in (1, 20):  # what retrieval finds differs; the window it held room for must not
        options = convmem.AssemblyOptions(memory_k=2, memory_share=0.3, retrieved_k=k)
        report = conv.assemble(question, model=profile, options=options).report
        assert report.sections["relevant_memories"] > 0 and report.retrieved_ids
        assert report.total_tokens <= profile.input_budget
        windows.append(report.included_ids)
    assert windows[0] == windows[1]


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_finds_nothing_with_or_without_vectors(
    mem: convmem.Memory, query: str
) -> None:
    """With an embedder, the vector of a blank query used to rank every turn; without one the
    same search found nothing. Nothing is asked either way, as for memories."""
    conv = mem.scope("acme", "alice").create_conversation()
    conv.append("user", "I took up pottery last month.", metadata={"name": "Ana"})
    conv.append("assistant", "How lovely!")
    assert conv.search(query, k=5) == []
    assert conv.search("pottery", k=5)  # the conversation is searchable
