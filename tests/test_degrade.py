"""Graceful degradation on a real SQLite file: when the embedder, the search index or the summary
store fails, assembly still returns the window within budget and the report names the skipped
parts (never content); the message store itself failing is still an error."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

import convmem
from convmem import HashingEmbedder
from convmem.model.messages import Role
from convmem.retrieval.vector import Matrix
from convmem.service import create_app
from tests.test_tools_budget import OPENAI_TOOL

SMALL = convmem.ModelProfile(context_window=700, max_output=100, tokenizer="o200k_base")
MEDIUM = convmem.ModelProfile(context_window=1000, max_output=100, tokenizer="o200k_base")
QUESTION = "What was my gym locker code again?"
FILLER = [
    "Let's talk about the weather this week, it has been rainy and grey.",
    "I watched a documentary about deep sea creatures last night.",
    "The office coffee machine broke again this morning.",
    "We should plan the quarterly report outline soon.",
]


class BreakableEmbedder(HashingEmbedder):
    """A real embedder that can be made to fail, as a missing model or a dead GPU would."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.broken:
            raise RuntimeError("embedding failed for: " + " ".join(texts))
        return super().embed(texts)


@pytest.fixture
def embedder() -> BreakableEmbedder:
    return BreakableEmbedder()


@pytest.fixture
def mem(db_path: Path, embedder: BreakableEmbedder) -> Iterator[convmem.Memory]:
    with convmem.open(db_path, embedder=embedder) as m:
        yield m


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


def damage(db_path: Path, *statements: str) -> None:
    """Break the file from outside convmem, as a bad disk or a careless operator would."""
    with sqlite3.connect(db_path) as raw:
        for statement in statements:
            raw.execute(statement)


def assert_window_intact(
    ctx: convmem.AssembledContext, conv: convmem.Conversation, model: convmem.ModelProfile = SMALL
) -> None:
    assert ctx.messages[-1] == {"role": "user", "content": QUESTION}
    branch = [m.id for m in conv.branch()]
    kept = ctx.report.included_ids
    assert kept and kept == branch[-len(kept) :]  # the recent turns, newest kept
    assert ctx.report.total_tokens <= model.input_budget
    assert "4471" not in str(ctx.report.degraded) and "locker" not in str(ctx.report.degraded)


def test_a_failing_embedder_leaves_the_lexical_half(
    mem: convmem.Memory, embedder: BreakableEmbedder
) -> None:
    alice = mem.scope("acme", "alice")
    saved = alice.remember("My gym is the one on Elm Street.").memory
    assert saved is not None
    conv = alice.create_conversation()
    ids = chat(conv)
    embedder.broken = True  # first: a query's vector, once had, is cached across requests
    ctx = conv.assemble(QUESTION, model=MEDIUM)
    embedder.broken = False
    healthy = conv.assemble(QUESTION, model=MEDIUM)
    assert healthy.report.degraded == []
    assert ctx.report.degraded == ["embedder: error RuntimeError"]  # once, for both parts
    assert ids[4] in ctx.report.retrieved_ids  # the words still find the evicted turn
    assert saved.id in healthy.report.memory_ids
    assert ctx.report.memory_ids == healthy.report.memory_ids  # recall went on by its words
    assert_window_intact(ctx, conv, MEDIUM)


def test_a_lost_search_index_skips_retrieval(mem: convmem.Memory, db_path: Path) -> None:
    alice = mem.scope("acme", "alice")
    alice.remember("My gym is the one on Elm Street.")
    conv = alice.create_conversation()
    chat(conv)
    alice.pin("Answer briefly.")
    damage(db_path, "DROP TABLE message_fts", "DROP TABLE memories_fts")  # the indexes lost
    ctx = conv.assemble(QUESTION, model=SMALL, system="You are helpful.")
    degraded = ctx.report.degraded
    assert any(reason.startswith("retrieval: error ") for reason in degraded), degraded
    assert ctx.report.retrieved_ids == []
    assert ctx.messages[0]["content"] == "You are helpful."
    assert "Answer briefly." in str(ctx.messages[1]["content"])
    assert_window_intact(ctx, conv)


def test_a_failing_summary_store_skips_the_summary_and_writes_nothing(
    mem: convmem.Memory, db_path: Path
) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    chat(conv)
    damage(db_path, "DROP TABLE summaries")
    ctx = conv.assemble(QUESTION, model=SMALL)
    assert ctx.report.degraded == ["summary: error StoreError"]
    assert ctx.report.summary_id is None and ctx.report.sections["summary"] == 0
    assert_window_intact(ctx, conv)
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT count(*) FROM jobs").fetchone() == (0,)


def test_the_message_store_failing_is_still_an_error(mem: convmem.Memory, db_path: Path) -> None:
    conv = mem.scope("acme", "alice").create_conversation()
    chat(conv)
    damage(db_path, "DROP TABLE messages")
    with pytest.raises(convmem.StoreError):
        conv.assemble(QUESTION, model=SMALL)


def test_the_service_answers_200_with_the_skipped_parts(mem: convmem.Memory, db_path: Path) -> None:
    token = mem.keys.create("acme", "user", user="alice").token
    conv = mem.scope("acme", "alice").create_conversation()
    chat(conv)
    damage(db_path, "DROP TABLE message_fts")
    h = {"Authorization": f"Bearer {token}"}
    body = {
        "user_message": QUESTION,
        "model": {"context_window": 700, "max_output": 100, "tokenizer": "o200k_base"},
    }
    with TestClient(create_app(mem), raise_server_exceptions=True) as client:
        response = client.post(f"/v1/conversations/{conv.id}/assemble", json=body, headers=h)
        assert response.status_code == 200, response.text
        report = response.json()["report"]
        assert any(r.startswith("retrieval: error ") for r in report["degraded"])
        assert "4471" not in response.text.split('"report"')[1]
        kept = client.get(f"/v1/conversations/{conv.id}/last-assembly", headers=h).json()
        assert kept["report"]["degraded"] == report["degraded"]


def test_the_metrics_count_skipped_parts_by_part_never_content(
    mem: convmem.Memory, db_path: Path, embedder: BreakableEmbedder
) -> None:
    token = mem.keys.create("acme", "user", user="alice").token
    conv = mem.scope("acme", "alice").create_conversation()
    chat(conv)
    damage(db_path, "DROP TABLE summaries")
    embedder.broken = True
    h = {"Authorization": f"Bearer {token}"}
    body = {
        "user_message": QUESTION,
        "model": {"context_window": 700, "max_output": 100, "tokenizer": "o200k_base"},
    }
    with TestClient(create_app(mem)) as client:
        reports = [
            client.post(f"/v1/conversations/{conv.id}/assemble", json=body, headers=h).json()[
                "report"
            ]
            for _ in range(2)
        ]
        text = client.get("/metrics").text
    assert all(sorted(r["degraded"]) == ["embedder: error RuntimeError",
                                         "summary: error StoreError"] for r in reports)  # fmt: skip
    samples = {
        sample.labels.get("part"): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "convmem_request_degraded_parts"
        for sample in family.samples
        if sample.name.endswith("_total")
    }
    assert samples == {
        "embedder": 2,
        "summary": 2,
        "memories": 0,
        "tools": 0,
        "retrieval": 0,
        "reranker": 0,
        "session": 0,
        "other": 0,
    }
    assert "4471" not in text and "locker" not in text and "RuntimeError" not in text


def test_failing_memories_keep_the_tools_the_caller_sent(
    mem: convmem.Memory, db_path: Path
) -> None:
    alice = mem.scope("acme", "alice")
    alice.remember("My gym is the one on Elm Street.")
    conv = alice.create_conversation()
    chat(conv)
    damage(db_path, "DROP TABLE memories")
    ctx = conv.assemble(QUESTION, model=MEDIUM, tools=[OPENAI_TOOL])
    assert any(reason.startswith("memories: error ") for reason in ctx.report.degraded)
    assert ctx.report.memory_ids == []
    assert ctx.report.tools_offered == ["get_current_weather"]
    assert ctx.tools is not None and ctx.report.sections["tools"] > 0
    assert_window_intact(ctx, conv, MEDIUM)


def test_a_lost_tool_index_skips_the_registry_and_keeps_the_caller_s_tools(
    mem: convmem.Memory, db_path: Path
) -> None:
    mem.tools.register(
        "acme", {"name": "find_locker", "description": "Look up a gym locker by member."},
        use_when=["user asks about their gym locker"],
    )  # fmt: skip
    conv = mem.scope("acme", "alice").create_conversation()
    chat(conv)
    healthy = conv.assemble(QUESTION, model=MEDIUM, tools=[OPENAI_TOOL], offer_tools=True)
    assert healthy.report.tools_offered == ["get_current_weather", "find_locker"]
    damage(db_path, "DROP TABLE tools_fts")  # the registry's index lost
    ctx = conv.assemble(QUESTION, model=MEDIUM, tools=[OPENAI_TOOL], offer_tools=True)
    assert any(reason.startswith("tools: error ") for reason in ctx.report.degraded)
    assert ctx.report.tools_offered == ["get_current_weather"]  # the caller's own still go
    assert ctx.tools is not None and len(ctx.tools) == 1
    assert_window_intact(ctx, conv, MEDIUM)
