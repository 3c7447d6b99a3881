"""Tool definitions in the budget: the three providers' shapes read alike, bad definitions
refused clearly, costs counted per provider, reserved before history, rendered in the format."""

from __future__ import annotations

import json
from typing import Any

import pytest

import convmem
from convmem import AssemblyOptions, BudgetExceeded, InvalidInput, ModelProfile
from convmem.content.tokens import REPLY_PRIMING, get_counter, message_tokens
from convmem.context.formats import count_openai_request
from convmem.model.tools import ToolSpec
from convmem.tools.cost import (
    ANTHROPIC_TOOL_PROMPT_UNKNOWN,
    anthropic_tool_prompt,
    tools_tokens,
)
from convmem.tools.schema import parse_tools, render_tools

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {
            "type": "string",
            "description": "The city and state, e.g. San Francisco, CA",
        },
        "unit": {
            "type": "string",
            "description": "The unit of temperature to return",
            "enum": ["celsius", "fahrenheit"],
        },
    },
    "required": ["location"],
}
DESCRIPTION = "Get the current weather in a given location"
OPENAI_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": DESCRIPTION,
        "parameters": WEATHER_SCHEMA,
    },
}
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_current_weather",
    "description": DESCRIPTION,
    "parameters": WEATHER_SCHEMA,
}
ANTHROPIC_TOOL = {
    "name": "get_current_weather",
    "description": DESCRIPTION,
    "input_schema": WEATHER_SCHEMA,
}


def test_the_three_shapes_read_as_one_definition_and_render_back() -> None:
    specs = [parse_tools([shape])[0] for shape in (OPENAI_TOOL, RESPONSES_TOOL, ANTHROPIC_TOOL)]
    assert specs[0] == specs[1] == specs[2]
    assert specs[0] == ToolSpec("get_current_weather", DESCRIPTION, WEATHER_SCHEMA)
    assert render_tools(specs[:1], "openai") == [OPENAI_TOOL]
    assert render_tools(specs[:1], "responses") == [RESPONSES_TOOL]
    assert render_tools(specs[:1], "anthropic") == [ANTHROPIC_TOOL]
    strict = parse_tools([{**RESPONSES_TOOL, "strict": True}])[0]
    assert render_tools([strict], "openai")[0]["function"]["strict"] is True
    bare = parse_tools([{"name": "ping"}])[0]
    assert bare.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        ({"name": "x"}, "must be a list"),
        ("get_weather", "must be a list"),
        ([42], "tool 0: must be an object"),
        ([{"name": "has space"}], "tool 0: name"),
        ([{"name": "a" * 65}], "tool 0: name"),
        ([{"description": "no name"}], "tool 0: name"),
        ([{"name": "ok"}, {"name": "ok"}], "tool 1: two tools share"),
        ([{"name": "f", "parameters": {"type": "array"}}], "type 'object'"),
        ([{"name": "f", "parameters": {"type": "object", "properties": []}}], "'properties'"),
        ([{"name": "f", "parameters": {"type": "object", "properties": {"a": 1}}}], "'properties'"),
        ([{"name": "f", "input_schema": "{}"}], "must be a JSON object"),
        ([{"name": "f", "parameters": {"x": float("nan")}}], "JSON-serialisable"),
        ([{"name": "f", "description": 7}], "description must be a string"),
        ([{"type": "web_search"}], "only function tools"),
        ([{"type": "function", "function": "f"}], "'function' must be an object"),
        ([{"name": "f", "strict": "yes"}], "'strict'"),
        ([{"name": f"t{i}"} for i in range(129)], "at most 128"),
    ],
)
def test_bad_definitions_are_refused_and_nothing_is_written(
    alice: convmem.Scope, tools: Any, problem: str
) -> None:
    conv = alice.create_conversation()
    conv.append("user", "hello")
    with pytest.raises(InvalidInput, match=problem):
        conv.assemble("what is the weather?", tools=tools)
    assert [m.content for m in conv.messages()] == ["hello"]
    assert conv.last_assembly() is None


def test_openai_costs_follow_the_cookbook_recipe() -> None:
    """The OpenAI Cookbook's worked example ("How to count tokens with tiktoken", function
    calling): the API reported 101 prompt tokens for gpt-4o and 105 for gpt-4 / gpt-3.5-turbo."""
    messages = [
        ("system", "You are a helpful assistant that can answer to questions about the weather."),
        ("user", "What's the weather like in San Francisco?"),
    ]
    specs = parse_tools([OPENAI_TOOL])
    for encoding, reported in (("o200k_base", 101), ("cl100k_base", 105)):
        counter = get_counter(encoding)
        chat = REPLY_PRIMING + sum(message_tokens(counter, r, c) for r, c in messages)
        assert chat + tools_tokens(counter, "openai", specs) == reported
        assert tools_tokens(counter, "responses", specs) == tools_tokens(counter, "openai", specs)


def test_schema_parts_beyond_the_recipe_are_charged_not_ignored() -> None:
    counter = get_counter("o200k_base")
    flat = {"type": "object", "properties": {"rows": {"type": "array", "description": "Rows"}}}
    nested = json.loads(json.dumps(flat))
    nested["properties"]["rows"]["items"] = {
        "type": "object",
        "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
    }
    cost = [
        tools_tokens(counter, "openai", parse_tools([{"name": "order", "parameters": schema}]))
        for schema in (flat, nested)
    ]
    assert cost[1] > cost[0] + 10


def test_anthropic_costs_the_published_tool_prompt_per_model() -> None:
    counter = get_counter("estimate")
    specs = parse_tools([ANTHROPIC_TOOL])
    own = counter.count(json.dumps(ANTHROPIC_TOOL, separators=(",", ":"), ensure_ascii=False))
    assert anthropic_tool_prompt("claude-sonnet-4-5-20250929") == 346
    assert anthropic_tool_prompt("claude-3-5-sonnet-20240620") == 294
    assert anthropic_tool_prompt("claude-3-opus-20240229") == 530
    assert anthropic_tool_prompt("claude-3-haiku-20240307") == 340  # tool_choice any: the larger
    assert anthropic_tool_prompt(None) == ANTHROPIC_TOOL_PROMPT_UNKNOWN == 530
    assert tools_tokens(counter, "anthropic", specs, "claude-sonnet-4-5") == 346 + own
    assert tools_tokens(counter, "anthropic", [], "claude-sonnet-4-5") == 0


@pytest.mark.parametrize("format", ["openai", "responses", "anthropic"])
def test_tools_are_rendered_reported_and_reserved_before_history(
    alice: convmem.Scope, format: Any
) -> None:
    conv = alice.create_conversation()
    for i in range(30):
        conv.append("user", f"question {i} " + "lorem ipsum dolor sit amet " * 12)
        conv.append("assistant", f"answer {i} " + "consectetur adipiscing elit " * 12)
    profile = ModelProfile(context_window=3000, max_output=200, name="claude-sonnet-4-5")
    options = AssemblyOptions(eviction_block=0, summary_threshold=None, retrieved_k=0)
    without = conv.assemble("and now?", model=profile, format=format, options=options)
    with_tools = conv.assemble(
        "and now?", model=profile, format=format, options=options, tools=[ANTHROPIC_TOOL]
    )
    expected = render_tools(parse_tools([ANTHROPIC_TOOL]), format)
    assert without.tools is None and with_tools.tools == expected
    report = with_tools.report
    counter = get_counter("o200k_base")
    cost = tools_tokens(counter, format, parse_tools([ANTHROPIC_TOOL]), profile.name)
    assert next(iter(report.sections)) == "tools"
    assert report.sections["tools"] == cost > 0 and without.report.sections["tools"] == 0
    assert report.tools_offered == ["get_current_weather"] and report.tools_suppressed == []
    # history gives way: the tools are a fixed part
    assert report.history_budget == without.report.history_budget - cost
    assert len(report.included_ids) < len(without.report.included_ids)
    assert report.total_tokens <= profile.input_budget
    if format == "openai":
        counted = count_openai_request(counter, with_tools.messages)
        assert counted + cost == report.total_tokens
    # the tools belong to the cached prefix
    assert report.stable_prefix_hash != without.report.stable_prefix_hash


def test_tools_that_do_not_fit_raise_budget_exceeded(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    many = [
        {"name": f"tool_{i}", "description": "does a thing " * 20, "parameters": WEATHER_SCHEMA}
        for i in range(20)
    ]
    with pytest.raises(BudgetExceeded) as raised:
        conv.assemble("hi", model=ModelProfile(context_window=1000, max_output=100), tools=many)
    assert raised.value.needed > raised.value.available


def test_the_tool_cost_is_a_constant_of_the_request(alice: convmem.Scope) -> None:
    """Tools add the same tokens however long the conversation is."""
    conv = alice.create_conversation()
    costs = set()
    for i in range(5):
        conv.append("user", f"question {i} " + "lorem " * 10)
        conv.append("assistant", f"answer {i}")
        ctx = conv.assemble("next?", tools=[OPENAI_TOOL])
        costs.add(ctx.report.sections["tools"])
    assert len(costs) == 1
