"""Chat Completions messages to and from convmem messages: the shape the frameworks convert from.

A message's ``name`` rides in convmem's ``name`` metadata (the speaker search indexes); content
must be text — a convmem message holds text, so image or audio parts are refused, not dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convmem.context.formats import openai_message
from convmem.engine import Conversation
from convmem.errors import InvalidMessage
from convmem.model.messages import ROLES, Message, Role, ToolCall


def to_chat(message: Message) -> dict[str, Any]:
    """A stored message as a Chat Completions message (with its ``name`` when it has one)."""
    rendered = openai_message(message)
    name = message.metadata.get("name")
    if isinstance(name, str) and message.role in ("user", "assistant", "system"):
        rendered["name"] = name
    return rendered


def append_chat(
    conversation: Conversation,
    chat: Mapping[str, Any],
    *,
    metadata: Mapping[str, Any] | None = None,
    parent_id: str | None = None,
) -> Message:
    """Store one Chat Completions message under ``parent_id`` (default: the active leaf)."""
    role = chat.get("role")
    if role == "developer":  # the newer name of the system role
        role = "system"
    if role not in ROLES:
        raise InvalidMessage("a message's role must be system, user, assistant or tool")
    content = chat.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise InvalidMessage("only text content can be stored")
    calls = [
        ToolCall(call["id"], call["function"]["name"], call["function"].get("arguments") or "{}")
        for call in chat.get("tool_calls") or ()
    ]
    extra = dict(metadata or {})
    if isinstance(chat.get("name"), str):
        extra["name"] = chat["name"]
    chosen: Role = role
    return conversation.append(
        chosen, content, tool_calls=calls, tool_call_id=chat.get("tool_call_id"),
        metadata=extra or None, parent_id=parent_id,
    )  # fmt: skip
