"""ConvmemSession: the OpenAI Agents SDK's Session on a convmem conversation, with the real SDK."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner

import convmem
from convmem.integrations.agents import ConvmemSession

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
spec = importlib.util.find_spec("agents_session")
assert spec is not None
from agents_session import ScriptedModel, forecast  # noqa: E402

ITEMS: list[dict[str, Any]] = [
    {"type": "message", "role": "system", "content": "Be brief."},
    {"type": "message", "role": "user", "content": "Weather in Lisbon and Porto?"},
    {"type": "function_call", "call_id": "c1", "name": "forecast", "arguments": '{"city":"LIS"}'},
    {"type": "function_call", "call_id": "c2", "name": "forecast", "arguments": '{"city":"OPO"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "c2", "output": "rain"},
    {"type": "message", "role": "assistant", "content": "Sunny in Lisbon, rain in Porto."},
]


def test_items_round_trip_in_the_responses_shape(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    session = ConvmemSession(conversation)
    output_message = {
        "id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Anything else?", "annotations": []}],
    }  # fmt: skip
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}

    async def run() -> tuple[list[Any], list[Any]]:
        await session.add_items([*ITEMS, reasoning, output_message])
        return await session.get_items(), await session.get_items(limit=2)

    items, last_two = asyncio.run(run())
    assert items == [*ITEMS, {"type": "message", "role": "assistant", "content": "Anything else?"}]
    assert last_two == items[-2:]
    roles = [(m.role, len(m.tool_calls)) for m in conversation.branch()]
    assert roles == [("system", 0), ("user", 0), ("assistant", 2), ("tool", 0), ("tool", 0),
                     ("assistant", 0), ("assistant", 0)]  # fmt: skip


def test_pop_moves_back_without_destroying(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    session = ConvmemSession(conversation)

    async def run() -> list[Any]:
        await session.add_items(ITEMS[1:4])  # the user's message and two calls
        popped = [await session.pop_item()]  # the second call: the turn keeps the first
        popped.append(await session.pop_item())  # the first call
        await session.add_items([{"role": "user", "content": "Just Lisbon, please."}])
        return popped

    popped = asyncio.run(run())
    assert [p["call_id"] for p in popped] == ["c2", "c1"]
    branch = conversation.branch()
    assert [m.content for m in branch] == ["Weather in Lisbon and Porto?", "Just Lisbon, please."]
    every = conversation.messages()
    assert len(every) == 4  # the first turn with both calls, its one-call version, the new turn
    turns = [m for m in every if m.role == "assistant"]
    assert sorted(len(m.tool_calls) for m in turns) == [1, 2]
    # the new message is a third branch beside the two versions of the turn
    assert len(conversation.siblings(branch[1].id)) == 3


def test_pop_and_clear_at_the_edges(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    session = ConvmemSession(conversation)

    async def run() -> list[Any]:
        empty = await session.pop_item()
        await session.add_items([{"role": "user", "content": "hello"}])
        first = await session.pop_item()
        await session.add_items(ITEMS[:2])
        await session.clear_session()
        return [empty, first, await session.get_items()]

    empty, first, after_clear = asyncio.run(run())
    assert empty is None and first == {"type": "message", "role": "user", "content": "hello"}
    assert after_clear == [] and conversation.messages() == []


def test_refused_items_write_nothing(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    session = ConvmemSession(conversation)
    image = {"role": "user", "content": [{"type": "input_image", "image_url": "data:,x"}]}
    with pytest.raises(convmem.InvalidMessage):
        asyncio.run(session.add_items([image]))
    with pytest.raises(convmem.InvalidMessage):
        asyncio.run(session.add_items([{"type": "computer_call", "call_id": "x"}]))
    orphan = {"type": "function_call_output", "call_id": "nope", "output": "x"}
    with pytest.raises(convmem.InvalidMessage):
        asyncio.run(session.add_items([orphan]))
    assert conversation.messages() == []


def test_an_agent_run_keeps_its_history_in_convmem(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    session = ConvmemSession(conversation)
    model = ScriptedModel()
    agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=[forecast])
    run = RunConfig(tracing_disabled=True)

    async def both() -> tuple[Any, Any]:
        first = await Runner.run(agent, "Weather in Lisbon?", session=session, run_config=run)
        second = await Runner.run(agent, "And tomorrow?", session=session, run_config=run)
        return first, second

    first, _ = asyncio.run(both())
    assert first.final_output == "The forecast says: sunny in Lisbon, 24 °C"
    branch = conversation.branch()
    assert [m.role for m in branch] == ["user", "assistant", "tool", "assistant"] * 2
    assert branch[2].content == "sunny in Lisbon, 24 °C"
    assert branch[1].tool_calls[0].name == "forecast"
    # the second run's first request carried the first run, read back from convmem
    sent = model.inputs[2]
    assert [i.get("role") or i["type"] for i in sent] == [
        "user", "function_call", "function_call_output", "assistant", "user"
    ]  # fmt: skip
    reopened = alice.conversation(conversation.id)
    assert asyncio.run(ConvmemSession(reopened).get_items())[0]["content"] == "Weather in Lisbon?"


def test_responses_format_in_assemble(alice: convmem.Scope) -> None:
    conversation = alice.create_conversation()
    asyncio.run(ConvmemSession(conversation).add_items(ITEMS[1:]))
    alice.remember("I prefer aisle seats.")
    chat = conversation.assemble("Thanks!", format="openai", system="Be brief.")
    items = conversation.assemble("Thanks!", format="responses", system="Be brief.")
    assert items.report.total_tokens == chat.report.total_tokens
    assert items.report.included_ids == chat.report.included_ids
    kinds = [i.get("role") or i["type"] for i in items.messages]
    calls = ["function_call"] * 2 + ["function_call_output"] * 2
    assert kinds == ["system", "system", "user", *calls, "assistant", "user"]
    assert items.messages[0]["content"] == "Be brief."
    assert "aisle seats" in items.messages[1]["content"]
    assert items.messages[-1] == {"type": "message", "role": "user", "content": "Thanks!"}
