"""The LLM summarizer against a local OpenAI-compatible server: a faithful model, garbage, a
timeout, an HTTP error and invented numbers; and the worker path through the engine."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

import convmem
from convmem.model.messages import Message, Role
from convmem.ops.worker import Worker
from convmem.summarize import LLMSummarizer, LLMSummarizerConfig
from convmem.summarize.llm import PROMPT_VERSION
from tests.fake_llm import FakeLLM

DECISION = "Decision: we'll use PostgreSQL 16 for the orders database."
CONSTRAINT = "Constraint: the API must answer within 250 ms at p95."


def turns(*texts: tuple[Role, str]) -> list[Message]:
    out, parent = [], None
    for i, (role, text) in enumerate(texts):
        m = Message(f"msg_{i}", "conv", parent, i, role, text, (), None, {}, datetime.now(UTC))
        out.append(m)
        parent = m.id
    return out


TURNS = turns(("user", DECISION), ("assistant", "Noted."), ("user", CONSTRAINT))


def summarizer(llm: FakeLLM, **overrides: float) -> LLMSummarizer:
    settings = {"timeout": 5.0, "retries": 2, "retry_backoff": 0.0, **overrides}
    return LLMSummarizer(
        LLMSummarizerConfig(
            base_url=llm.base_url,
            model="fake",
            api_key="sk-test",
            timeout=settings["timeout"],
            retries=int(settings["retries"]),
            retry_backoff=settings["retry_backoff"],
        )
    )


def test_a_faithful_answer_becomes_the_snapshot_with_its_cost() -> None:
    with FakeLLM("good") as llm:
        result = summarizer(llm).summarize(None, TURNS)
        request = llm.requests[0]
    assert result.fallback_reason is None
    assert [d.text for d in result.snapshot.decisions] == [DECISION]
    assert result.snapshot.decisions[0].sources == ("msg_0",)
    assert result.snapshot.constraints[0].sources == ("msg_2",)
    assert (result.cost.calls, result.cost.input_tokens, result.cost.output_tokens) == (1, 120, 30)
    assert request["model"] == "fake"
    assert request["response_format"] == {"type": "json_object"}
    assert "msg_0" in request["messages"][1]["content"]
    assert summarizer(llm).prompt_version == PROMPT_VERSION
    assert summarizer(llm).name == "llm:fake"
    assert "sk-test" not in repr(summarizer(llm).config)


def test_garbage_is_retried_then_the_extractive_result_stands_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    with FakeLLM("garbage") as llm:
        result = summarizer(llm).summarize(None, TURNS)
        assert len(llm.requests) == 3
    assert result.fallback_reason == "invalid output: the answer is not JSON (after 3 attempts)"
    assert result.cost.calls == 3
    assert result.cost.input_tokens == 360
    assert [d.text for d in result.snapshot.decisions] == [DECISION]  # the extractive result
    assert "PostgreSQL" not in caplog.text  # logs never hold content
    assert "250 ms" not in caplog.text


def test_a_model_that_times_out_falls_back_with_the_reason() -> None:
    with FakeLLM("hang") as llm:
        result = summarizer(llm, timeout=0.3, retries=1).summarize(None, TURNS)
        assert len(llm.requests) == 2
    assert result.fallback_reason == "timeout (after 2 attempts)"
    assert result.snapshot.decisions


def test_an_http_error_falls_back_with_the_status() -> None:
    with FakeLLM("error") as llm:
        result = summarizer(llm, retries=0).summarize(None, TURNS)
    assert result.fallback_reason == "http 500 (after 1 attempts)"


def test_notes_citing_numbers_absent_from_their_sources_are_repaired_or_dropped() -> None:
    with FakeLLM("wrong_numbers") as llm:
        result = summarizer(llm).summarize(None, TURNS)
    assert result.fallback_reason is None
    # "PostgreSQL 99" occurs in no message: dropped
    assert result.snapshot.decisions == ()
    # "250 ms" occurs, but not in the invented id it cited: re-cited to the message holding it
    assert [c.text for c in result.snapshot.constraints] == ["Answer within 250 ms."]
    assert result.snapshot.constraints[0].sources == ("msg_2",)


SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")


def chat(conv: convmem.Conversation, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        conv.append("user", f"Turn {i}: tell me something nice about tea.")
        conv.append("assistant", "Tea has been enjoyed for ages, in many ways, by many people.")


def summary_text(ctx: convmem.AssembledContext) -> str:
    return "\n".join(m["content"] for m in ctx.messages if m["role"] == "system")


def test_the_request_never_waits_on_the_model(db_path: Path) -> None:
    with FakeLLM("good") as llm:
        config = convmem.Config(
            summarizer=LLMSummarizerConfig(base_url=llm.base_url, model="fake", retry_backoff=0)
        )
        with convmem.open(db_path, config=config) as memory:
            conv = memory.scope("acme", "alice").create_conversation()
            conv.append("user", DECISION)
            chat(conv, 40)
            ctx = conv.assemble("continue", model=SMALL)
            assert ctx.report.evicted_ids
            assert ctx.report.summary_id is None  # nothing ready yet: truncation only
            assert llm.requests == []  # the request did not call the model
            assert [j.status for j in memory.jobs()] == ["pending"]

            worker = Worker(memory, lease_seconds=10)
            assert worker.run(exit_when_idle=True) == 1
            assert len(llm.requests) == 1
            ctx = conv.assemble("continue", model=SMALL)
            assert ctx.report.summary_source == "stored"
            assert DECISION in summary_text(ctx)
            record = conv.summary()
            assert record is not None
            assert record.summarizer == "llm:fake"
            assert record.cost.calls == 1
            assert record.fallback_reason is None

            chat(conv, 40, start=100)  # the window moves on: a newer summary is needed
            ctx = conv.assemble("continue", model=SMALL)
            assert ctx.report.summary_source == "ancestor"  # the older one stands in
            assert ctx.report.summary_id == record.id
            assert worker.run(exit_when_idle=True) == 1
            ctx = conv.assemble("continue", model=SMALL)
            assert ctx.report.summary_source == "stored"
            assert ctx.report.summary_id != record.id
            newer = conv.summary()
            assert newer is not None
            assert newer.previous_id == record.id  # rolled from it


def test_a_model_outage_still_yields_a_summary_marked_as_a_fallback(db_path: Path) -> None:
    with FakeLLM("error") as llm:
        config = convmem.Config(
            summarizer=LLMSummarizerConfig(
                base_url=llm.base_url, model="fake", retries=0, retry_backoff=0
            )
        )
        with convmem.open(db_path, config=config) as memory:
            conv = memory.scope("acme", "alice").create_conversation()
            conv.append("user", DECISION)
            chat(conv, 40)
            conv.assemble("continue", model=SMALL)
            Worker(memory).run(exit_when_idle=True)
            job = memory.jobs()[0]
            assert job.status == "done"
            assert job.last_error == "fallback: http 500 (after 1 attempts)"
            record = conv.summary()
            assert record is not None
            assert record.fallback_reason == "http 500 (after 1 attempts)"
            assert DECISION in record.rendered
