"""Property: over random trees, tool chains, oversized results, tool definitions and budgets, for
both formats, the assembled request (tool definitions included) fits the budget counted by the same
counter, never splits a tool call from its results, and keeps the newest contiguous part of the
branch."""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import convmem
from convmem import BudgetExceeded, ModelProfile, ToolCall
from convmem.content.media_tokens import image_tokens, provider_of
from convmem.content.tokens import get_counter
from convmem.context.formats import count_anthropic_request, count_openai_request
from convmem.tools.cost import tools_tokens
from convmem.tools.schema import parse_tools

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "42",
    "release-7",
    "ünïcode",
    "東京",
    "{json:",
    "1}",
    "def",
    "f(x):",
    "return",
    "x",
]

sizes = st.one_of(st.integers(1, 40), st.integers(1, 40), st.integers(300, 1500))
op = st.one_of(
    st.tuples(st.just("user"), sizes),
    st.tuples(st.just("assistant"), sizes),
    st.tuples(st.just("tools"), st.lists(sizes, min_size=1, max_size=3), st.booleans()),
    st.tuples(
        st.just("tools"), st.lists(st.integers(200, 3000), min_size=1, max_size=2), st.just(True)
    ),
    st.tuples(st.just("edit"), st.integers(0, 10_000), sizes),
    st.tuples(st.just("switch"), st.integers(0, 10_000)),
)


def tool_definition(index: int, shape: str, words: int, arguments: int, nested: bool) -> Any:
    properties: dict[str, Any] = {
        f"arg_{a}": {"type": "string", "description": text(words // 2 + 1, a)}
        for a in range(arguments)
    }
    if arguments:
        properties["arg_0"]["enum"] = [text(1, e) for e in range(3)]
    if nested:
        properties["rows"] = {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "n": {"type": "integer"}}}}  # fmt: skip
    schema = {"type": "object", "properties": properties, "required": list(properties)[:1]}
    name, description = f"tool_{index}", text(words, index)
    if shape == "openai":
        return {"type": "function", "function": {
            "name": name, "description": description, "parameters": schema}}  # fmt: skip
    if shape == "responses":
        return {"type": "function", "name": name, "description": description, "parameters": schema}
    return {"name": name, "description": description, "input_schema": schema}


tool_lists = st.lists(
    st.tuples(
        st.sampled_from(["openai", "responses", "anthropic"]),
        st.integers(0, 60),
        st.integers(0, 4),
        st.booleans(),
    ),
    max_size=4,
)


# the tenant's registry: (shape, description words, properties, enum, risky); the first is named
# "lookup", the tool the conversation's calls name, so a follow-up can keep it offered
registries = st.lists(
    st.tuples(
        st.sampled_from(["openai", "responses", "anthropic"]),
        st.integers(0, 60),
        st.integers(0, 4),
        st.booleans(),
        st.booleans(),
    ),
    max_size=5,
)


def register(mem: convmem.Memory, registry: list[tuple[str, int, int, bool, bool]]) -> set[str]:
    """Register ``registry`` for tenant "t"; the names of its risky tools."""
    risky: set[str] = set()
    for i, (shape, words, props, enum, is_risky) in enumerate(registry):
        definition = tool_definition(100 + i, shape, words, props, enum)
        name = "lookup" if i == 0 else f"reg_{i}"
        if "function" in definition:
            definition["function"]["name"] = name
        else:
            definition["name"] = name
        mem.tools.register("t", definition, use_when=[text(3, i)],
                           risk="high" if is_risky else "low")  # fmt: skip
        if is_risky:
            risky.add(name)
    return risky


def text(n: int, salt: int) -> str:
    return " ".join(WORDS[(i * 7 + salt) % len(WORDS)] for i in range(n))


def build(
    conv: convmem.Conversation,
    ops: list[tuple[Any, ...]],
    user_turn: Callable[[int, tuple[Any, ...]], str] | None = None,
) -> None:
    """Play ``ops``; ``user_turn`` writes the user turns of kinds this function does not know
    (and returns their ids)."""
    ids: list[str] = []
    user_ids: list[str] = []
    for step, operation in enumerate(ops):
        kind = operation[0]
        if user_turn is not None and kind not in ("user", "assistant", "tools", "edit", "switch"):
            ids.append(user_turn(step, operation))
            user_ids.append(ids[-1])
        elif kind in ("user", "assistant"):
            m = conv.append(kind, text(operation[1], step))
            ids.append(m.id)
            if kind == "user":
                user_ids.append(m.id)
        elif kind == "tools":
            results, complete = operation[1], operation[2]
            calls = [
                ToolCall(f"call_{step}_{i}", "lookup", f'{{"q": {i}}}') for i in range(len(results))
            ]
            ids.append(conv.append("assistant", text(3, step), tool_calls=calls).id)
            answered = results if complete else results[:-1]
            for call, size in zip(calls, answered, strict=False):
                ids.append(conv.append("tool", text(size, step), tool_call_id=call.id).id)
        elif kind == "edit" and user_ids:
            target = user_ids[operation[1] % len(user_ids)]
            m = conv.edit(target, text(operation[2], step + 1))
            ids.append(m.id)
            user_ids.append(m.id)
        elif kind == "switch" and ids:
            conv.switch_branch(ids[operation[1] % len(ids)])


def check_tool_pairs_openai(messages: list[dict[str, Any]]) -> None:
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, "tool result without its call"
            open_calls.discard(message["tool_call_id"])
            continue
        assert not open_calls, "tool call without all its results"
        if message["role"] == "assistant" and message.get("tool_calls"):
            open_calls = {call["id"] for call in message["tool_calls"]}
    assert not open_calls, "tool call without all its results"


def check_tool_pairs_anthropic(messages: list[dict[str, Any]]) -> None:
    previous_calls: set[str] = set()
    for index, message in enumerate(messages):
        blocks = message["content"]
        assert blocks, "empty message"
        assert message["role"] == ("user" if index % 2 == 0 else "assistant"), "roles alternate"
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        assert set(results) == previous_calls, "every tool_use answered in the next user turn"
        if results:
            assert [b["type"] for b in blocks[: len(results)]] == ["tool_result"] * len(results)
        previous_calls = {b["id"] for b in blocks if b["type"] == "tool_use"}
    assert not previous_calls


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    ops=st.lists(op, min_size=1, max_size=30),
    window=st.integers(120, 6000),
    output_share=st.floats(0.0, 0.5),
    fmt=st.sampled_from(["openai", "anthropic"]),
    tokenizer=st.sampled_from(["o200k_base", "cl100k_base", "estimate"]),
    system=st.one_of(st.none(), st.integers(1, 200)),
    current=st.one_of(st.none(), st.integers(1, 300)),
    block=st.sampled_from([0.0, 0.25]),
    memories=st.integers(0, 5),
    tools=tool_lists,
    model_name=st.sampled_from([None, "gpt-4o", "claude-sonnet-4-5", "claude-3-sonnet-20240229"]),
    registry=registries,
    offer=st.booleans(),
    allow_risky=st.sampled_from([False, True, ["lookup"]]),
)
def test_assembled_requests_fit_pair_tools_and_keep_the_newest_turns(
    ops: list[tuple[Any, ...]],
    window: int,
    output_share: float,
    fmt: str,
    tokenizer: str,
    system: int | None,
    current: int | None,
    block: float,
    memories: int,
    tools: list[tuple[str, int, int, bool]],
    model_name: str | None,
    registry: list[tuple[str, int, int, bool, bool]],
    offer: bool,
    allow_risky: bool | list[str],
) -> None:
    with tempfile.TemporaryDirectory() as folder, convmem.open(Path(folder) / "p.db") as mem:
        risky = register(mem, registry)
        user = mem.scope("t", "u")
        # memories in the words the turns use, more than the block holds (memory_k 2 below), so
        # the late section for the ones that bear on the message is exercised too
        saved = {
            user.remember(f"Remember {text(4, 13 * i + 1)} {i}.").memory for i in range(memories)
        }
        conv = user.create_conversation()
        build(conv, ops)
        profile = ModelProfile(
            context_window=window, max_output=int(window * output_share), tokenizer=tokenizer,
            name=model_name,
        )  # fmt: skip
        definitions = [tool_definition(i, *spec) for i, spec in enumerate(tools)]
        counter = get_counter(tokenizer)
        current_text = text(current, 99) if current is not None else None
        if current_text is None and conv.record().active_leaf_id is None:
            current_text = "hello"
        try:
            ctx = conv.assemble(
                current_text,
                model=profile,
                format=fmt,  # type: ignore[arg-type]
                system=text(system, 5) if system is not None else None,
                options=convmem.AssemblyOptions(eviction_block=block, memory_k=2),
                tools=definitions,
                offer_tools=offer,
                allow_risky=allow_risky,
            )
        except BudgetExceeded as exc:
            assert exc.needed > exc.available
            event("budget exceeded")
            return
        report = ctx.report
        # the tools as sent, read back and counted the provider's way
        sent_tools = parse_tools(ctx.tools) if ctx.tools is not None else []
        given = [f"tool_{i}" for i in range(len(tools))]
        assert [t.name for t in sent_tools] == report.tools_offered
        assert report.tools_offered[: len(given)] == given
        from_registry = report.tools_offered[len(given) :]
        suppressed = {s["name"] for s in report.tools_suppressed}
        if offer:
            # every registry tool is offered or suppressed with a reason, never both
            names = {"lookup" if i == 0 else f"reg_{i}" for i in range(len(registry))}
            assert set(from_registry) | suppressed == names
            assert not set(from_registry) & suppressed
            assert len(from_registry) == len(set(from_registry))
            allowed = risky if allow_risky is True else set(allow_risky or [])
            assert not (set(from_registry) & risky) - allowed, "a risky tool not allowed"
        else:
            assert from_registry == [] and not suppressed
        tool_cost = tools_tokens(counter, fmt, sent_tools, model_name)
        assert report.sections["tools"] == tool_cost
        if fmt == "openai":
            counted = tool_cost + count_openai_request(counter, ctx.messages)
            assert counted == report.total_tokens
            check_tool_pairs_openai(ctx.messages)
        else:
            assert ctx.system is not None
            counted = tool_cost + count_anthropic_request(counter, ctx.system, ctx.messages)
            assert counted <= report.total_tokens
            check_tool_pairs_anthropic(ctx.messages)
        assert counted <= profile.input_budget <= window - profile.max_output

        branch = [m.id for m in conv.branch()]
        eligible = [mid for mid in branch if mid not in set(report.incomplete_ids)]
        included = report.included_ids
        assert included == eligible[len(eligible) - len(included) :], "newest contiguous part"
        if current_text is None and eligible:
            assert included, "the stored turn being answered is always sent"
        assert set(report.memory_ids) <= {m.id for m in saved if m is not None}
        assert len(set(report.memory_ids)) == len(report.memory_ids), "no memory twice"
        event(
            f"evicted: {bool(report.evicted_ids)}, stubbed: {bool(report.stubbed_ids)}, "
            f"incomplete: {bool(report.incomplete_ids)}, "
            f"late memories: {report.sections['relevant_memories'] > 0}, "
            f"tools: {bool(report.tools_offered)}, from the registry: {bool(from_registry)}"
        )
        for stubbed in report.stubbed_ids:
            assert conv.message(stubbed).role == "tool"


# --- messages with content parts ----------------------------------------------------------------

image_op = st.tuples(
    st.just("image"),
    st.integers(0, 30),
    st.sampled_from([(1280, 720), (4096, 8192), (512, 512), (200, 3000), (1920, 1080)]),
    st.sampled_from(["low", "high", "auto"]),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 4000)),
)
# user turns with text and an image by URL (or kept inline), and sometimes a document, among the
# plain operations
part_op = st.one_of(op, image_op, image_op)


class Media:
    """What the test sent, by the reference a rendered request names it with: each image's
    size and detail, each document's stated estimate; counted by the provider's published rule."""

    def __init__(self, tokenizer: str) -> None:
        self.provider = provider_of(tokenizer)
        self.images: dict[str, tuple[int, int, str]] = {}
        self.files: dict[str, int] = {}
        self.image_ids: set[str] = set()

    def cost(self, part: Mapping[str, Any]) -> int:
        kind = part["type"]
        if kind in ("image_url", "image"):
            if kind == "image_url":
                ref = part["image_url"]["url"]
            elif part["source"]["type"] == "url":
                ref = part["source"]["url"]
            else:
                ref = f"data:{part['source']['media_type']};base64,{part['source']['data']}"
            width, height, detail = self.images[ref]
            return image_tokens(width, height, detail, self.provider)
        file_id = part["file"]["file_id"] if kind == "file" else part["source"]["file_id"]
        return self.files[file_id]


def build_with_parts(conv: convmem.Conversation, ops: list[tuple[Any, ...]], media: Media) -> None:
    def user_turn(step: int, operation: tuple[Any, ...]) -> str:
        _, words, (width, height), detail, inline, document = operation
        content: list[dict[str, Any]] = [{"type": "text", "text": text(words + 1, step)}]
        if inline:
            data = base64.b64encode(b"\x89PNG" + step.to_bytes(4, "big")).decode()
            ref = f"data:image/png;base64,{data}"
        else:
            ref = f"https://img.example/{step}.png"
        media.images[ref] = (width, height, detail)
        content.append({"type": "image_url", "image_url": {"url": ref, "detail": detail},
                        "width": width, "height": height, "name": f"shot-{step}.png"})  # fmt: skip
        if document is not None:
            media.files[f"file-{step}"] = document
            content.append({"type": "file", "blob_id": f"file-{step}", "name": f"d{step}.pdf",
                            "token_estimate": document})  # fmt: skip
        message_id = conv.append("user", content, keep_bytes=inline).id
        media.image_ids.add(message_id)
        return message_id

    build(conv, ops, user_turn)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    ops=st.lists(part_op, min_size=1, max_size=30),
    window=st.integers(300, 20_000),
    output_share=st.floats(0.0, 0.5),
    fmt=st.sampled_from(["openai", "anthropic"]),
    tokenizer=st.sampled_from(["o200k_base", "cl100k_base", "estimate"]),
    current=st.one_of(st.none(), st.integers(1, 300)),
    block=st.sampled_from([0.0, 0.25]),
)
def test_requests_with_images_fit_pair_tools_and_stub_old_media_before_dropping_turns(
    ops: list[tuple[Any, ...]],
    window: int,
    output_share: float,
    fmt: str,
    tokenizer: str,
    current: int | None,
    block: float,
) -> None:
    with tempfile.TemporaryDirectory() as folder, convmem.open(Path(folder) / "p.db") as mem:
        conv = mem.scope("t", "u").create_conversation()
        media = Media(tokenizer)
        build_with_parts(conv, ops, media)
        profile = ModelProfile(
            context_window=window, max_output=int(window * output_share), tokenizer=tokenizer
        )
        counter = get_counter(tokenizer)
        current_text = text(current, 99) if current is not None else None
        if current_text is None and conv.record().active_leaf_id is None:
            current_text = "hello"
        options = convmem.AssemblyOptions(eviction_block=block)
        try:
            ctx = conv.assemble(current_text, model=profile, format=fmt, options=options)  # type: ignore[arg-type]
        except BudgetExceeded as exc:
            assert exc.needed > exc.available
            event("budget exceeded")
            return
        report = ctx.report
        if fmt == "openai":
            counted = count_openai_request(counter, ctx.messages, media.cost)
            check_tool_pairs_openai(ctx.messages)
        else:
            assert ctx.system is not None
            counted = count_anthropic_request(counter, ctx.system, ctx.messages, media.cost)
            check_tool_pairs_anthropic(ctx.messages)
        # media is charged at write as the larger of its provider rule and its text: a bound
        assert counted <= report.total_tokens <= profile.input_budget

        branch = [m.id for m in conv.branch()]
        eligible = [mid for mid in branch if mid not in set(report.incomplete_ids)]
        included = report.included_ids
        assert included == eligible[len(eligible) - len(included) :], "newest contiguous part"
        stubbed = set(report.media_stubbed_ids)
        assert stubbed <= media.image_ids & set(included)
        rendered = json.dumps(ctx.messages)
        sent_whole = [i for i in included if i in media.image_ids and i not in stubbed]
        for message_id in stubbed:
            assert f"described in message {message_id}" in rendered
        for message_id in sent_whole:
            assert f"described in message {message_id}" not in rendered
        assert 0 <= report.media_tokens["history"] <= report.sections["history"]
        assert 0 <= report.media_tokens["user"] <= report.sections["user"]
        newest_image = next((i for i in reversed(branch) if i in media.image_ids), None)
        event(
            f"images whole: {len(sent_whole) > 0}, media stubbed: {bool(stubbed)}, "
            f"evicted: {bool(report.evicted_ids)}, "
            f"newest image whole: {newest_image in sent_whole if newest_image else 'none'}"
        )
