"""Message values. ``NewMessage`` is what a caller writes; ``Message`` is what the store holds.

A message sent as content parts (text, images, files, audio) keeps them in ``parts``; its
``content`` is then the message as text (text parts verbatim, media by a short label and the
caller's caption or extracted text, never a URL or bytes): what search indexes, summaries and
memory read, and what a format that cannot carry the media sends instead."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from convmem.model.parts import Part

if TYPE_CHECKING:
    from convmem.model.memory import MemoryNotice

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = get_args(Role)


@dataclass(frozen=True)
class ToolCall:
    """A call an assistant message asks for. ``arguments`` is a JSON object as text."""

    id: str
    name: str
    arguments: str = "{}"

    def arguments_object(self) -> dict[str, Any]:
        value = json.loads(self.arguments)
        if not isinstance(value, dict):
            raise ValueError("tool call arguments must be a JSON object")
        return value

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class NewMessage:
    """A message as the caller writes it; identity and position are added by the store."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    parts: tuple[Part, ...] = ()
    # inline media the caller asked convmem to keep, by sha256 (the parts mark them ``kept``)
    blobs: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """A stored message: one node of a conversation's tree."""

    id: str
    conversation_id: str
    parent_id: str | None
    depth: int
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    metadata: Mapping[str, Any]
    created_at: datetime
    notices: tuple[MemoryNotice, ...] = ()
    parts: tuple[Part, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "role": self.role,
            "content": self.content,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "metadata": dict(self.metadata),
            "created_at": self.created_at.isoformat(),
        }
        if self.parts:
            out["parts"] = [part.to_dict() for part in self.parts]
        return out
