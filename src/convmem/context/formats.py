"""Rendering an assembled plan into a provider's request shape, and counting a rendered request.

OpenAI chat: one list of messages; system sections lead as system messages; tool calls ride on
assistant messages and each result is a ``tool`` message.

Anthropic messages: system sections go apart as text blocks; roles alternate user/assistant, so
consecutive messages of one role merge into one message with several blocks; tool calls become
``tool_use`` blocks and results ``tool_result`` blocks in a user message; a history that starts
with an assistant turn gets a short user placeholder first. A merged message never costs more than
the messages it holds, so the stored per-message counts bound the rendered request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from convmem.content.parts import sends_parts
from convmem.content.parts_render import anthropic_content, openai_content, responses_content
from convmem.content.tokens import (
    ESTIMATE,
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_TOOL_CALL,
    TokenCounter,
    compact_arguments,
    message_tokens,
)
from convmem.model.messages import Message, ToolCall
from convmem.model.parts import Part

Format = Literal["openai", "anthropic", "responses"]
FORMATS: tuple[str, ...] = ("openai", "anthropic", "responses")
ANTHROPIC_LEAD_PLACEHOLDER = "(earlier turns omitted)"
# what a rendered media part or block costs (recounting a request: the caller knows its images)
MediaCounter = Callable[[Mapping[str, Any]], int]


@dataclass(frozen=True)
class HistoryItem:
    """A message kept in the window; ``content`` is the stub when ``stubbed``. A user turn
    with content parts is sent as ``parts`` (media stubbed in them when ``whole`` holds the
    item as it would be sent with its media; ``media_tokens`` is the media's share of
    ``tokens``)."""

    message: Message
    content: str
    tokens: int
    stubbed: bool = False
    parts: tuple[Part, ...] = ()
    media_tokens: int = 0
    whole: HistoryItem | None = None


@dataclass(frozen=True)
class Section:
    """A labelled piece of the request outside the verbatim history."""

    name: str
    text: str
    tokens: int


def lead_placeholder_tokens(counter: TokenCounter) -> int:
    return message_tokens(counter, "user", ANTHROPIC_LEAD_PLACEHOLDER)


# --- OpenAI -------------------------------------------------------------------------------------


def openai_history_message(
    item: HistoryItem, blobs: Mapping[str, bytes] | None = None
) -> dict[str, Any]:
    message = item.message
    content = openai_content(item.parts, blobs or {}) if item.parts else item.content
    rendered: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant" and message.tool_calls:
        rendered["content"] = item.content or None
        rendered["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        rendered["tool_call_id"] = message.tool_call_id
    return rendered


def openai_message(message: Message) -> dict[str, Any]:
    """A stored message as one Chat Completions message (integrations map it onward); a user
    turn with parts as its parts (kept bytes, not read here, go as their label)."""
    parts = message.parts if sends_parts(message.role, message.parts) else ()
    return openai_history_message(HistoryItem(message, message.content, 0, parts=parts))


def render_openai(
    leading: Sequence[Section],
    history: Sequence[HistoryItem],
    trailing: Sequence[Section],
    current: str | None,
    blobs: Mapping[str, bytes] | None = None,
    answered: Sequence[HistoryItem] = (),
) -> list[dict[str, Any]]:
    """``answered``: the stored turn being answered (when no new message is sent), after the
    trailing sections as a new message would be."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": section.text} for section in leading
    ]
    messages.extend(openai_history_message(item, blobs) for item in history)
    messages.extend({"role": "system", "content": section.text} for section in trailing)
    messages.extend(openai_history_message(item, blobs) for item in answered)
    if current is not None:
        messages.append({"role": "user", "content": current})
    return messages


def count_openai_request(
    counter: TokenCounter,
    messages: Sequence[dict[str, Any]],
    media: MediaCounter | None = None,
) -> int:
    """Tokens of a rendered OpenAI request, counted the way assembly budgets it. Content parts
    other than text are counted by ``media`` (what the caller knows each image costs)."""
    total = REPLY_PRIMING
    for message in messages:
        calls = message.get("tool_calls") or []
        tool_calls = [
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls
        ]
        content = message.get("content") or ""
        if isinstance(content, list):
            total += _parts_tokens(counter, content, media)
            content = ""
        total += message_tokens(
            counter,
            message["role"],
            content,
            tool_calls,
            message.get("tool_call_id"),
        )
    return total


def _parts_tokens(
    counter: TokenCounter, parts: Sequence[dict[str, Any]], media: MediaCounter | None
) -> int:
    total = 0
    for part in parts:
        if part["type"] in ("text", "input_text"):
            total += counter.count(part["text"])
        elif media is None:
            raise ValueError(f"a {part['type']} part needs a media counter")
        else:
            total += media(part)
    return total


# --- OpenAI Responses ----------------------------------------------------------------------------


def responses_items(
    message: Message, content: str, parts: Sequence[Part] = (), blobs: Mapping[str, bytes] = {}
) -> list[dict[str, Any]]:
    """A stored message as Responses API input items: a message item for its text (its parts,
    for a user turn sent as parts), one ``function_call`` item per tool call, a
    ``function_call_output`` for a tool result."""
    if parts:
        return [{"type": "message", "role": message.role,
                 "content": responses_content(parts, blobs)}]  # fmt: skip
    if message.role == "tool":
        return [
            {"type": "function_call_output", "call_id": message.tool_call_id, "output": content}
        ]
    items: list[dict[str, Any]] = []
    if content or not message.tool_calls:
        items.append({"type": "message", "role": message.role, "content": content})
    items.extend(
        {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        for call in message.tool_calls
    )
    return items


def render_responses(
    leading: Sequence[Section],
    history: Sequence[HistoryItem],
    trailing: Sequence[Section],
    current: str | None,
    blobs: Mapping[str, bytes] | None = None,
    answered: Sequence[HistoryItem] = (),
) -> list[dict[str, Any]]:
    """The Responses API's ``input``: the same order as the Chat Completions rendering, each
    message as its items. An item costs what its chat message costs, so the budget holds."""
    system = [{"type": "message", "role": "system", "content": s.text} for s in leading]
    items: list[dict[str, Any]] = list(system)
    for item in history:
        items.extend(responses_items(item.message, item.content, item.parts, blobs or {}))
    items.extend({"type": "message", "role": "system", "content": s.text} for s in trailing)
    for item in answered:
        items.extend(responses_items(item.message, item.content, item.parts, blobs or {}))
    if current is not None:
        items.append({"type": "message", "role": "user", "content": current})
    return items


# --- Anthropic ----------------------------------------------------------------------------------


def _anthropic_blocks(
    item: HistoryItem, blobs: Mapping[str, bytes]
) -> tuple[str, list[dict[str, Any]]]:
    message = item.message
    if item.parts:
        return "user", anthropic_content(item.parts, blobs)
    if message.role == "tool":
        block = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": item.content,
        }
        return "user", [block]
    if message.role == "assistant":
        blocks: list[dict[str, Any]] = []
        if item.content:
            blocks.append({"type": "text", "text": item.content})
        for call in message.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": json.loads(compact_arguments(call.arguments)),
                }
            )
        return "assistant", blocks
    # user, and system notes inside the history (the Messages API has no system turns)
    return "user", [{"type": "text", "text": item.content}]


def render_anthropic(
    leading: Sequence[Section],
    history: Sequence[HistoryItem],
    trailing: Sequence[Section],
    current: str | None,
    blobs: Mapping[str, bytes] | None = None,
    answered: Sequence[HistoryItem] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Returns ``(system_blocks, messages)``."""
    system = [{"type": "text", "text": section.text} for section in leading]
    turns: list[tuple[str, list[dict[str, Any]]]] = [
        _anthropic_blocks(item, blobs or {}) for item in history
    ]
    turns.extend(("user", [{"type": "text", "text": s.text}]) for s in trailing)
    turns.extend(_anthropic_blocks(item, blobs or {}) for item in answered)
    if current is not None:
        turns.append(("user", [{"type": "text", "text": current}]))
    if turns and turns[0][0] == "assistant":
        turns.insert(0, ("user", [{"type": "text", "text": ANTHROPIC_LEAD_PLACEHOLDER}]))
    messages: list[dict[str, Any]] = []
    for role, blocks in turns:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})
    return system, messages


def _block_tokens(
    counter: TokenCounter, block: dict[str, Any], media: MediaCounter | None = None
) -> int:
    kind = block["type"]
    if kind == "text":
        return counter.count(block["text"])
    if kind in ("image", "document") and media is not None:
        return media(block)
    if kind == "tool_use":
        arguments = json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False)
        return (
            TOKENS_PER_TOOL_CALL
            + counter.count(block["id"])
            + counter.count(block["name"])
            + counter.count(arguments)
        )
    if kind == "tool_result":
        return counter.count(block["tool_use_id"]) + counter.count(block["content"])
    raise ValueError(f"unknown block type {kind!r}")


def count_anthropic_request(
    counter: TokenCounter,
    system: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    media: MediaCounter | None = None,
) -> int:
    """Tokens of a rendered Anthropic request, counted the way assembly budgets it (image and
    document blocks by ``media``)."""
    per_message = TOKENS_PER_MESSAGE + (1 if counter.name == ESTIMATE else 0)
    total = REPLY_PRIMING
    for block in system:
        total += per_message + counter.count("system") + counter.count(block["text"])
    for message in messages:
        total += per_message + counter.count(message["role"])
        total += sum(_block_tokens(counter, block, media) for block in message["content"])
    return total
