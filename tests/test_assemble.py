"""Context assembly on real SQLite: order, budget, stubs, formats, block eviction."""

from __future__ import annotations

import itertools
import json

import pytest

import convmem
from convmem import AssemblyOptions, BudgetExceeded, ModelProfile, ToolCall

SMALL = ModelProfile(context_window=600, max_output=100, tokenizer="o200k_base")
MEDIUM = ModelProfile(context_window=2000, max_output=100, tokenizer="o200k_base")


def chat(conv: convmem.Conversation, turns: int, words: int = 20) -> None:
    for i in range(turns):
        conv.append("user", f"question {i} " + "lorem " * words)
        conv.append("assistant", f"answer {i} " + "ipsum " * words)


def test_order_system_pinned_history_user(alice: convmem.Scope) -> None:
    alice.pin("Answer in English.")
    conv = alice.create_conversation()
    conv.pin("This conversation is about trains.")
    chat(conv, 2)
    ctx = conv.assemble("And the last train?", system="You are helpful.")
    roles = [m["role"] for m in ctx.messages]
    assert roles == ["system", "system", "user", "assistant", "user", "assistant", "user"]
    assert ctx.messages[0]["content"] == "You are helpful."
    pinned = ctx.messages[1]["content"]
    assert pinned.index("Answer in English.") < pinned.index("about trains")
    assert ctx.messages[-1] == {"role": "user", "content": "And the last train?"}
    sections = list(ctx.report.sections)
    assert sections == [
        "tools", "system", "pinned", "memories", "summary", "history", "relevant_memories",
        "entity_facts", "retrieved", "documents", "user",
    ]  # fmt: skip
    assert ctx.report.sections["memories"] == ctx.report.sections["summary"] == 0


def test_history_is_filled_newest_first_and_the_rest_evicted(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, 30)
    ctx = conv.assemble("next?", model=SMALL, options=AssemblyOptions(eviction_block=0))
    branch = [m.id for m in conv.branch()]
    kept = ctx.report.included_ids
    assert kept
    assert kept == branch[-len(kept) :]
    assert ctx.report.evicted_count == len(branch) - len(kept)
    assert ctx.report.evicted_ids[0] == branch[-len(kept) - 1]
    assert ctx.report.total_tokens <= SMALL.input_budget


def test_budget_exceeded_names_the_numbers(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "hello")
    with pytest.raises(BudgetExceeded) as info:
        conv.assemble("word " * 2000, model=SMALL)
    assert info.value.needed > info.value.available > 0
    assert str(info.value.available) in str(info.value)
    assert "word" not in str(info.value)  # never content in errors


def test_oversized_tool_result_is_stubbed_before_turns_are_dropped(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, 2, words=5)
    conv.append("user", "fetch the page")
    conv.append("assistant", "", tool_calls=[ToolCall("c1", "fetch", '{"url": "u"}')])
    big = conv.append("tool", "row " * 3000, tool_call_id="c1")
    conv.append("assistant", "The page lists many rows.")
    ctx = conv.assemble("summarise it", model=SMALL)
    assert ctx.report.stubbed_ids == [big.id]
    assert ctx.report.evicted_ids == []  # everything else still fits
    tool_message = next(m for m in ctx.messages if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "c1"
    assert "omitted" in tool_message["content"]
    assert "row row" not in tool_message["content"]


def test_a_tool_call_and_its_results_are_dropped_together(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "start " + "x " * 150)
    conv.append("assistant", "a " * 100, tool_calls=[ToolCall("c1", "f"), ToolCall("c2", "g")])
    r1 = conv.append("tool", "one", tool_call_id="c1")
    r2 = conv.append("tool", "two", tool_call_id="c2")
    chat(conv, 6, words=25)
    ctx = conv.assemble("?", model=SMALL, options=AssemblyOptions(eviction_block=0))
    kept = set(ctx.report.included_ids)
    assert (r1.id in kept) == (r2.id in kept)
    for message in ctx.messages:
        assert message["role"] != "tool" or message["tool_call_id"] in ("c1", "c2")


def test_unanswered_tool_calls_are_left_out(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "hi")
    pending = conv.append("assistant", "", tool_calls=[ToolCall("c1", "f")])
    conv.append("user", "never mind")
    ctx = conv.assemble("ok?")
    assert ctx.report.incomplete_ids == [pending.id]
    assert all(not m.get("tool_calls") for m in ctx.messages)


def test_anthropic_format(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "weather?")
    conv.append(
        "assistant", "Checking.", tool_calls=[ToolCall("c1", "weather", '{"city": "Oslo"}')]
    )
    conv.append("tool", "rain", tool_call_id="c1")
    conv.append("assistant", "It rains.")
    ctx = conv.assemble("And tomorrow?", system="Be brief.", format="anthropic")
    assert ctx.system == [{"type": "text", "text": "Be brief."}]
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user", "assistant", "user"]
    assistant = ctx.messages[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "weather",
        "input": {"city": "Oslo"},
    }
    assert ctx.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "rain"}
    ]
    assert ctx.messages[-1]["content"][-1] == {"type": "text", "text": "And tomorrow?"}
    json.dumps(ctx.messages)  # provider-ready: plain JSON


def test_anthropic_history_starting_with_an_assistant_turn_gets_a_placeholder(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("assistant", "Welcome! How can I help?")
    ctx = conv.assemble("Hi", format="anthropic")
    assert ctx.messages[0]["role"] == "user"
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user"]


def test_context_follows_the_active_branch(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "My city is Oslo.")
    a = conv.append("assistant", "Oslo noted.")
    edited = conv.edit(q.id, "My city is Rome.")
    texts = [m["content"] for m in conv.assemble("Where do I live?").messages]
    assert "My city is Rome." in texts
    assert "My city is Oslo." not in texts
    old = conv.assemble("Where?", leaf_id=a.id).report.included_ids
    assert old == [q.id, a.id]
    assert edited.id not in old


def test_regenerate_assembles_the_answered_turn_without_a_new_message(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "Tell me a joke")
    reply = conv.append("assistant", "A bad joke")
    conv.regenerate(reply.id)
    ctx = conv.assemble(None)
    assert ctx.messages[-1] == {"role": "user", "content": "Tell me a joke"}
    assert ctx.report.included_ids == [q.id]
    assert ctx.report.sections["user"] > 0
    assert ctx.report.sections["history"] == 0


def test_block_eviction_keeps_the_prefix_identical_across_turns(alice: convmem.Scope) -> None:
    def starts(block: float) -> list[str]:
        conv = alice.create_conversation()
        firsts = []
        for i in range(80):
            conv.append("user", f"question {i} " + "lorem " * 15)
            options = AssemblyOptions(eviction_block=block)
            ctx = conv.assemble(None, model=MEDIUM, options=options)
            firsts.append(ctx.report.included_ids[0])
            conv.append("assistant", f"answer {i} " + "ipsum " * 15)
        return firsts

    def changes(firsts: list[str]) -> int:
        return sum(1 for a, b in itertools.pairwise(firsts) if a != b)

    sliding, blocked = changes(starts(0.0)), changes(starts(0.25))
    assert sliding >= 35  # a sliding window moves nearly every turn once full
    assert blocked * 4 < sliding


def test_bad_options_are_refused(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "hi")
    with pytest.raises(convmem.InvalidInput):
        conv.assemble("x", format="gemini")  # type: ignore[arg-type]
    with pytest.raises(convmem.InvalidInput):
        conv.assemble("x", model=ModelProfile(tokenizer="nope"))
    with pytest.raises(convmem.InvalidInput):
        ModelProfile(context_window=100, max_output=100)
    with pytest.raises(convmem.InvalidInput, match="ModelProfile"):
        conv.assemble("x", model="gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(convmem.InvalidInput, match="AssemblyOptions"):
        conv.assemble("x", options={"retrieved_k": 3})  # type: ignore[arg-type]
    with pytest.raises(convmem.InvalidMessage):
        conv.assemble("   ")
    with pytest.raises(convmem.InvalidInput):
        alice.create_conversation().assemble(None)


def test_the_options_system_prompt_is_the_default(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    options = convmem.AssemblyOptions(system_prompt="You are terse.")
    assert conv.assemble("Hi", options=options).messages[0] == {
        "role": "system",
        "content": "You are terse.",
    }
    given = conv.assemble("Hi", system="You are kind.", options=options).messages[0]
    assert given["content"] == "You are kind."
