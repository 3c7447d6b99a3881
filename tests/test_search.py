"""Hybrid search on real SQLite: ranking, scope isolation, deletion from both indexes, hostile
queries, the retrieved slot of assembly, backfill and rebuild."""

from __future__ import annotations

import json
import sqlite3
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


def fts_count(db_path: Path, table: str, word: str) -> int:
    with sqlite3.connect(db_path) as db:
        row = db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (f'"{word}"',))
        return int(row.fetchone()[0])


def rows(db_path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db_path) as db:
        return list(db.execute(sql, params).fetchall())


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


# --- deletion -----------------------------------------------------------------------------------


def test_deleted_messages_leave_both_indexes(mem: convmem.Memory, db_path: Path) -> None:
    alice = mem.scope("acme", "alice")
    conv = alice.create_conversation()
    ids = chat(conv, history("9876"))
    conv.append("user", "the quokka photo was lovely")
    assert fts_count(db_path, "message_fts", "quokka") == 1
    assert rows(db_path, "SELECT count(*) FROM conversation_terms WHERE term = 'quokka'") == [(1,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'quokka'") == [(1,)]
    deleted = conv.delete_message(ids[4])  # the locker turn and everything after it
    assert ids[4] in deleted
    assert fts_count(db_path, "message_fts", "quokka") == 0
    assert fts_count(db_path, "message_fts", "9876") == 0
    placeholders = ",".join("?" * len(deleted))
    assert rows(
        db_path, f"SELECT count(*) FROM message_index WHERE message_id IN ({placeholders})",
        *deleted,
    ) == [(0,)]  # fmt: skip
    assert rows(db_path, "SELECT count(*) FROM conversation_terms WHERE term = 'quokka'") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'quokka'") == [(0,)]
    assert all(h.message.id not in deleted for h in conv.search("locker code quokka", k=50))
    # the parent's neighbour context no longer holds the deleted turn's words
    assert rows(db_path, "SELECT ctx FROM message_index WHERE message_id = ?", ids[3])[0][0]
    assert "9876" not in str(rows(db_path, "SELECT ctx FROM message_index"))


def test_deleted_memories_leave_both_indexes(mem: convmem.Memory, db_path: Path) -> None:
    alice = mem.scope("acme", "alice")
    notice = alice.remember("My favourite airline is Finnair.")
    assert notice.memory is not None
    assert rows(db_path, "SELECT count(*) FROM memory_vectors") == [(1,)]
    alice.memories.delete(notice.memory.id)
    assert fts_count(db_path, "memories_fts", "finnair") == 0
    assert rows(db_path, "SELECT count(*) FROM memory_vectors") == [(0,)]
    assert alice.search_memories("Finnair airline") == []


def test_delete_all_and_conversation_delete_empty_every_search_table(
    mem: convmem.Memory, db_path: Path
) -> None:
    alice, bob = mem.scope("acme", "alice"), mem.scope("acme", "bob")
    for who in (alice, bob):
        chat(who.create_conversation(), history("5555"))
        who.remember("I like the quokka photos.")
    gone = alice.create_conversation()
    chat(gone, ["a conversation about narwhals", "narwhals are whales"])
    gone.delete()
    assert fts_count(db_path, "message_fts", "narwhals") == 0
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'narwhals'") == [(0,)]
    alice.conversation(alice.conversations()[0].id).append("user", "my axolotl is called Bo")
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'axolotl'") == [(1,)]
    exported = alice.export()
    json.dumps(exported)  # no vector bytes in an export
    assert not {"message_index", "memory_vectors", "conversation_terms"} & set(exported["data"])
    alice.delete_all()
    for table in ("message_index", "conversation_terms", "memory_vectors", "search_generations"):
        column = "user_id" if table in ("message_index", "memory_vectors") else "conversation_id"
        if column == "user_id":
            left = rows(db_path, f"SELECT count(*) FROM {table} WHERE user_id = 'alice'")
        else:
            left = rows(
                db_path, f"SELECT count(*) FROM {table} WHERE conversation_id NOT IN "
                "(SELECT id FROM conversations)",
            )  # fmt: skip
        assert left == [(0,)], table
    # a word only alice used leaves with her; bob's words (the same ones) keep their vectors
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'axolotl'") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM term_vectors WHERE term = 'locker'") == [(1,)]
    assert bob.conversation(bob.conversations()[0].id).search("locker", k=3)


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


def test_the_index_is_rebuilt_from_messages(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        ids = chat(conv, history("4471"))
    with sqlite3.connect(db_path) as db:  # the index is derived: drop it all
        db.execute("DELETE FROM message_index")
        db.execute("DELETE FROM conversation_terms")
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").conversation(conv.id)
        assert conv.search("locker", k=3) == []
        assert mem.reindex() == 40
        assert ids[4] in [h.message.id for h in conv.search("locker", k=3)]


def test_reindex_finishes_past_messages_it_cannot_index(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        conv.append("user", "look it up")
        # whitespace SQLite's trim() keeps: the SQL pre-filter passes it, indexing refuses it
        call = convmem.ToolCall(id="c1", name="lookup", arguments="{}")
        conv.append("assistant", "\n\t", tool_calls=[call])
        conv.append("tool", "found", tool_call_id="c1")
        conv.append("assistant", "It is on the shelf.")
        assert mem.reindex() == 0  # everything indexable already is; and it returns
    with sqlite3.connect(db_path) as db:
        db.execute("DELETE FROM message_index")
    with convmem.open(db_path) as mem:
        assert mem.reindex() == 2


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


def test_a_database_from_before_the_index_is_upgraded_and_indexed(db_path: Path) -> None:
    from convmem.store.sqlite import migrations

    with convmem.open(db_path) as mem:  # write through the API, then forget the search tables
        alice = mem.scope("acme", "alice")
        conv = alice.create_conversation()
        ids = chat(conv, history("4471"))
        alice.remember("I prefer aisle seats.")
    with sqlite3.connect(db_path) as db:
        for name in ("m020_message_index", "m021_memory_search"):
            db.execute("DELETE FROM _migrations WHERE name = ?", (name,))
        for table in ("message_fts", "message_index", "conversation_terms", "term_vectors",
                      "search_generations", "memory_vectors", "memories_fts"):  # fmt: skip
            db.execute(f"DROP TABLE {table}")
        for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update",
                        "memory_vectors_forget", "message_index_forget",
                        "conversation_terms_forget", "search_generation_forget"):  # fmt: skip
            db.execute(f"DROP TRIGGER {trigger}")
        migrations.m006_memories_fts(db)  # the memory index as it was before m021
        db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    with convmem.open(db_path) as mem:  # migrates, then indexes the old messages
        alice = mem.scope("acme", "alice")
        conv = alice.conversation(conv.id)
        assert ids[4] in [h.message.id for h in conv.search("locker code", k=3)]
        assert [h.memory.text for h in alice.search_memories("aisle")] == ["I prefer aisle seats."]


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


def _unembedded(db_path: Path) -> tuple[int, int, int]:
    (turns,) = rows(db_path, "SELECT count(*) FROM message_index WHERE vector IS NULL")[0]
    (memories,) = rows(
        db_path,
        "SELECT count(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)",
    )[0]
    (words,) = rows(
        db_path,
        "SELECT count(*) FROM conversation_terms t WHERE t.speaker = 0 AND NOT EXISTS "
        "(SELECT 1 FROM term_vectors v WHERE v.tenant_id = t.tenant_id AND v.term = t.term)",
    )[0]
    return int(turns), int(memories), int(words)  # type: ignore[call-overload]


def test_the_worker_embeds_what_was_written_without_vectors(db_path: Path) -> None:
    from convmem.worker import Worker

    config = convmem.Config(embed_on_write=False)
    with convmem.open(db_path, config=config, embedder=HashingEmbedder()) as mem:
        alice = mem.scope("acme", "alice")
        alice.remember("I prefer aisle seats on long flights.")
        conv = alice.create_conversation()
        chat(conv, [*FILLER, "I took up pottery last month.", "How fun!"])
        turns, memories, words = _unembedded(db_path)
        assert turns == len(FILLER) + 2 and memories == 1 and words > 20
        worker = Worker(mem)
        # one batch of each kind at a time, so jobs are never kept waiting long
        assert worker.embed_pending(batch_size=3) == 3 + 3 * 8 + 1
        assert worker.run(exit_when_idle=True) == 0  # no summary jobs; the rest embedded
        assert _unembedded(db_path) == (0, 0, 0)
        hit = conv.search("pottery", k=1)[0]
        assert "pottery" in hit.message.content and "vector" in hit.retrievers
        assert worker.embed_pending() == 0


def test_the_worker_command_embeds_with_the_chosen_model(db_path: Path) -> None:
    from click.testing import CliRunner

    from convmem.cli import main

    with convmem.open(db_path) as mem:  # no embedder: nothing is embedded on write
        chat(mem.scope("acme", "alice").create_conversation(), FILLER)
    assert _unembedded(db_path)[0] == len(FILLER)
    ran = CliRunner().invoke(main, ["worker", "--db", str(db_path), "--once", "--embedder",
                                    "hashing"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert _unembedded(db_path) == (0, 0, 0)


def test_late_memories_do_not_move_the_window_retrieval_held(mem: convmem.Memory) -> None:
    alice = mem.scope("acme", "alice")
    for text in ("My gym is the big one downtown, next to the old train station and the river.",
                 "My gym locker is the one in the second row by the window, near the showers.",
                 "I train at the gym on Mondays and Thursdays before work, around seven.",
                 "I prefer aisle seats.", "My sister lives in Oslo."):  # fmt: skip
        alice.remember(text)
    conv = alice.create_conversation()
    chat(conv, [f"The gym locker note {i}: " + FILLER[i % len(FILLER)] for i in range(60)])
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
