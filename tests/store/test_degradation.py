"""Graceful degradation on every backend: when a part of memory (the search index, the embedder,
the summary lookup, memory recall) fails or is slow, assembly returns the window within budget
and the report says which parts were skipped and why; nothing is written; only the message store
failing is an error (503 over HTTP).

Failures and delays are injected into real components: a table of the part renamed away (the
index lost, a migration half done) or replaced by a view whose every read runs for minutes (the
database itself is slow: the part's time limit must interrupt the statement, or the test would
hang), and a real embedder that raises or sleeps.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem import HashingEmbedder
from convmem.model.messages import Role
from convmem.retrieval.vector import Matrix
from convmem.service import create_app
from tests.service.test_metrics import scrape, value
from tests.store.backends import Backend

MODEL = convmem.ModelProfile(context_window=1000, max_output=100, tokenizer="o200k_base")
QUESTION = "What was my gym locker code again?"
SYSTEM = "You are helpful."
FILLER = [
    "Let's talk about the weather this week, it has been rainy and grey.",
    "I watched a documentary about deep sea creatures last night.",
    "The office coffee machine broke again this morning.",
    "We should plan the quarterly report outline soon.",
]
# Generous limits for every part but the one a test makes slow: a loaded machine must not
# trip a healthy part.
EASY = convmem.TimeLimits(memories=10.0, retrieval=10.0, summary=10.0, embedder=10.0)
TIGHT = 0.05  # 50 ms


class BreakableEmbedder(HashingEmbedder):
    """A real embedder that can be made to fail or to hang, as a missing model, a dead GPU or
    an overloaded embedding API would."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False
        self.delay = 0.0

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.broken:
            raise RuntimeError("embedding failed for: " + " ".join(texts))
        if self.delay:
            time.sleep(self.delay)
        return super().embed(texts)


@pytest.fixture
def embedder() -> BreakableEmbedder:
    return BreakableEmbedder()


@pytest.fixture
def mem(backend: Backend, embedder: BreakableEmbedder) -> Iterator[convmem.Memory]:
    with backend.open(embedder=embedder) as m:
        yield m


@contextmanager
def raw(backend: Backend) -> Iterator[Any]:
    """A connection of the backend's own driver, outside convmem (autocommit)."""
    if backend.name == "sqlite":
        with closing(sqlite3.connect(backend.url.removeprefix("sqlite:///"))) as db:
            db.isolation_level = None
            yield db
    else:
        import psycopg

        with psycopg.connect(backend.url, autocommit=True) as db:
            yield db


def break_table(backend: Backend, table: str) -> None:
    """The table is gone (renamed away): every statement on it fails."""
    with raw(backend) as db:
        db.execute(f"ALTER TABLE {table} RENAME TO {table}_gone")


def slow_table(backend: Backend, table: str) -> None:
    """Every read of the table runs for minutes: it becomes a view over the kept rows that
    first counts to two billion (SQLite) or sleeps ten minutes (PostgreSQL)."""
    if backend.name == "sqlite":
        slow = (
            "JOIN (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            "WHERE i < 2000000000) SELECT max(i) AS top FROM n) AS slow ON slow.top > 0"
        )
    else:
        slow = "WHERE (SELECT count(*) FROM pg_sleep(600)) > 0"
    with raw(backend) as db:
        db.execute(f"ALTER TABLE {table} RENAME TO {table}_kept")
        db.execute(f"CREATE VIEW {table} AS SELECT k.* FROM {table}_kept k {slow}")


def heal_table(backend: Backend, table: str) -> None:
    with raw(backend) as db:
        db.execute(f"DROP VIEW {table}")
        db.execute(f"ALTER TABLE {table}_kept RENAME TO {table}")


def chat(conv: convmem.Conversation) -> list[str]:
    """Forty turns; the fifth holds the locker code, long evicted from a small window."""
    lines = [FILLER[i % len(FILLER)] + f" (note {i})" for i in range(40)]
    lines[4] = "My locker code at the gym is 4471, by the way."
    lines[5] = "Noted, I will remember the locker code."
    at = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    ids = []
    for i, line in enumerate(lines):
        role: Role = "user" if i % 2 == 0 else "assistant"
        ids.append(conv.append(role, line, created_at=at + timedelta(minutes=i)).id)
    return ids


def setting(mem: convmem.Memory) -> tuple[convmem.Conversation, list[str], str]:
    """Alice with a memory, a pin and a long chat: (the conversation, its ids, the memory's id)."""
    alice = mem.scope("acme", "alice")
    saved = alice.remember("My gym is the one on Elm Street.").memory
    assert saved is not None
    conv = alice.create_conversation()
    alice.pin("Answer briefly.")
    return conv, chat(conv), saved.id


def assemble(
    conv: convmem.Conversation, limits: convmem.TimeLimits = EASY, **options: Any
) -> convmem.AssembledContext:
    return conv.assemble(
        QUESTION, model=MODEL, system=SYSTEM,
        options=convmem.AssemblyOptions(time_limits=limits, **options),
    )  # fmt: skip


def assert_window_intact(ctx: convmem.AssembledContext, conv: convmem.Conversation) -> None:
    """System prompt, pins, the newest turns and the question, within budget; no content in
    the report's reasons."""
    assert ctx.messages[0]["content"] == SYSTEM
    assert "Answer briefly." in str(ctx.messages[1]["content"])
    assert ctx.messages[-1] == {"role": "user", "content": QUESTION}
    branch = [m.id for m in conv.branch()]
    kept = ctx.report.included_ids
    assert kept and kept == branch[-len(kept) :]
    assert ctx.report.total_tokens <= MODEL.input_budget
    reasons = " ".join(ctx.report.degraded)
    assert not any(word in reasons for word in ("4471", "locker", "Elm", "gym"))


# --- each part failing --------------------------------------------------------------------------


def test_a_lost_search_index_skips_retrieval(mem: convmem.Memory, backend: Backend) -> None:
    conv, ids, memory_id = setting(mem)
    healthy = assemble(conv)
    assert healthy.report.degraded == [] and ids[4] in healthy.report.retrieved_ids
    break_table(backend, "message_index")
    ctx = assemble(conv)
    assert ctx.report.degraded == ["retrieval: error StoreError"]
    assert ctx.report.retrieved_ids == []
    assert ctx.report.memory_ids == [memory_id]  # the other parts went on
    assert ctx.report.summary_id == healthy.report.summary_id is not None
    assert_window_intact(ctx, conv)


def test_a_failing_embedder_leaves_the_lexical_half(
    mem: convmem.Memory, embedder: BreakableEmbedder
) -> None:
    conv, ids, memory_id = setting(mem)
    embedder.broken = True
    ctx = assemble(conv)
    assert ctx.report.degraded == ["embedder: error RuntimeError"]
    assert ids[4] in ctx.report.retrieved_ids  # the words still find the evicted turn
    assert ctx.report.memory_ids == [memory_id]
    assert_window_intact(ctx, conv)


def test_a_lost_summary_table_skips_the_summary(mem: convmem.Memory, backend: Backend) -> None:
    conv, ids, memory_id = setting(mem)
    break_table(backend, "summaries")
    ctx = assemble(conv)
    assert ctx.report.degraded == ["summary: error StoreError"]
    assert ctx.report.summary_id is None and ctx.report.sections["summary"] == 0
    assert ids[4] in ctx.report.retrieved_ids and ctx.report.memory_ids == [memory_id]
    assert_window_intact(ctx, conv)
    with raw(backend) as db:  # nothing queued or half-written for it
        assert db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0


def test_a_lost_memory_table_skips_recall(mem: convmem.Memory, backend: Backend) -> None:
    conv, ids, _ = setting(mem)
    break_table(backend, "memories")
    ctx = assemble(conv)
    assert ctx.report.degraded == ["memories: error StoreError"]
    assert ctx.report.memory_ids == [] and ctx.report.sections["memories"] == 0
    assert ids[4] in ctx.report.retrieved_ids
    assert_window_intact(ctx, conv)


# --- each part too slow -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "table"),
    [("retrieval", "message_index"), ("summary", "summaries"), ("memories", "memories")],
)
def test_a_slow_part_is_stopped_at_its_time_limit_and_writes_nothing(
    mem: convmem.Memory, backend: Backend, part: str, table: str
) -> None:
    conv, _, memory_id = setting(mem)
    healthy = assemble(conv)  # builds and stores the summary: the next requests only read
    assert healthy.report.degraded == []
    before = backend.fingerprint()
    slow_table(backend, table)
    ctx = assemble(conv, replace(EASY, **{part: TIGHT}))
    heal_table(backend, table)
    assert ctx.report.degraded == [f"{part}: timeout 50 ms"]
    assert_window_intact(ctx, conv)
    assert backend.fingerprint() == before  # the stopped part wrote nothing
    skipped = {
        "retrieval": ctx.report.retrieved_ids == [],
        "summary": ctx.report.summary_id is None,
        "memories": ctx.report.memory_ids == [],
    }
    assert skipped[part]
    kept = {  # the other parts went on as they were
        "retrieval": ctx.report.retrieved_ids == healthy.report.retrieved_ids,
        "summary": ctx.report.summary_id == healthy.report.summary_id,
        "memories": ctx.report.memory_ids == healthy.report.memory_ids == [memory_id],
    }
    assert all(ok for name, ok in kept.items() if name != part), kept
    again = assemble(conv)  # the same transaction machinery serves the next request
    assert again.report.degraded == [] and again.messages == healthy.messages


def test_a_hung_embedder_is_left_behind_at_its_limit(
    mem: convmem.Memory, embedder: BreakableEmbedder
) -> None:
    conv, ids, memory_id = setting(mem)
    embedder.delay = 3.0
    ctx = assemble(conv, replace(EASY, embedder=TIGHT))
    embedder.delay = 0.0
    assert ctx.report.degraded == ["embedder: timeout 50 ms"]  # once, though two parts used it
    assert ids[4] in ctx.report.retrieved_ids  # lexical retrieval, in retrieval's own time
    assert ctx.report.memory_ids == [memory_id]
    assert_window_intact(ctx, conv)


def test_time_waiting_on_the_embedder_is_not_charged_to_the_part(
    mem: convmem.Memory, embedder: BreakableEmbedder
) -> None:
    conv, ids, _ = setting(mem)
    embedder.delay = 3.0  # well within the embedder's limit, well past retrieval's
    ctx = assemble(conv, replace(EASY, retrieval=1.0))
    assert ctx.report.degraded == []
    assert ids[4] in ctx.report.retrieved_ids


def test_limits_come_from_the_memory_config(backend: Backend, embedder: BreakableEmbedder) -> None:
    config = convmem.Config(time_limits=replace(EASY, embedder=TIGHT))
    with backend.open(embedder=embedder, config=config) as mem:
        conv, _, _ = setting(mem)
        embedder.delay = 1.0
        ctx = conv.assemble(QUESTION, model=MODEL, system=SYSTEM)
        assert ctx.report.degraded == ["embedder: timeout 50 ms"]
    with pytest.raises(convmem.InvalidInput):
        convmem.TimeLimits(retrieval=0)


# --- the message store itself -------------------------------------------------------------------


def test_the_message_store_failing_is_still_an_error(mem: convmem.Memory, backend: Backend) -> None:
    conv, _, _ = setting(mem)
    break_table(backend, "messages")
    with pytest.raises(convmem.StoreError):
        assemble(conv)


# --- over HTTP ----------------------------------------------------------------------------------


def test_the_service_answers_200_with_the_skipped_parts_and_503_without_messages(
    backend: Backend, embedder: BreakableEmbedder
) -> None:
    config = convmem.Config(time_limits=replace(EASY, summary=TIGHT, embedder=TIGHT))
    with backend.open(embedder=embedder, config=config) as mem:
        token = mem.keys.create("acme", "user", user="alice").token
        conv, _, _ = setting(mem)
        h = {"Authorization": f"Bearer {token}"}
        body = {
            "user_message": QUESTION,
            "system": SYSTEM,
            "model": {"context_window": 1000, "max_output": 100, "tokenizer": "o200k_base"},
        }
        url = f"/v1/conversations/{conv.id}/assemble"
        with TestClient(create_app(mem), raise_server_exceptions=False) as client:
            before = scrape(client)
            embedder.delay = 1.0
            slow_table(backend, "summaries")
            response = client.post(url, json=body, headers=h)
            assert response.status_code == 200, response.text
            report = response.json()["report"]
            assert report["degraded"] == ["embedder: timeout 50 ms", "summary: timeout 50 ms"]
            assert response.json()["messages"][-1] == {"role": "user", "content": QUESTION}
            assert report["retrieved_ids"]  # retrieval went on by its words
            kept = client.get(f"/v1/conversations/{conv.id}/last-assembly", headers=h).json()
            assert kept["report"]["degraded"] == report["degraded"]
            after = scrape(client)
            for part, count in [("embedder", 1), ("summary", 1), ("retrieval", 0)]:
                moved = value(after, "convmem_request_degraded_parts_total", part=part) - value(
                    before, "convmem_request_degraded_parts_total", part=part
                )
                assert moved == count, part
            embedder.delay = 0.0
            heal_table(backend, "summaries")
            break_table(backend, "messages")
            down = client.post(url, json=body, headers=h)
            assert down.status_code == 503
            assert down.headers["content-type"].startswith("application/problem+json")
            assert "4471" not in down.text and "locker" not in down.text


# --- the store's time-limited stretch -----------------------------------------------------------


def test_a_time_limited_stretch_stops_a_slow_read_and_leaves_the_transaction_usable(
    mem: convmem.Memory, backend: Backend
) -> None:
    from convmem.model.deadline import Deadline

    _, ids, _ = setting(mem)
    slow_table(backend, "summaries")
    break_table(backend, "memories")
    with mem.store.read() as tx:
        with pytest.raises(convmem.TimeLimitExceeded), tx.time_limited(Deadline(TIGHT)):
            tx.summary_through("acme", ids[10], "extractive", "v1")
        # a failed statement in a stretch does not poison the transaction either
        with pytest.raises(convmem.StoreError) as failed, tx.time_limited(Deadline(10.0)):
            tx.list_memories("acme", "alice", statuses=("confirmed",))
        assert not isinstance(failed.value, convmem.TimeLimitExceeded)
        with tx.time_limited(Deadline(10.0)):
            assert tx.get_message("acme", "alice", ids[4]).id == ids[4]
        assert [row.message.id for row in tx.branch("acme", ids[-1], "o200k_base")][-1] == ids[0]
