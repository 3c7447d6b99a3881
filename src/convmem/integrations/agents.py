"""The OpenAI Agents SDK on convmem (the ``agents`` extra): ``ConvmemSession``.

A ``Session`` (the SDK's protocol: get, add, pop and clear items) on a convmem conversation,
with items in the Responses API's shape. The items are the conversation's active branch: a
message item per message, a ``function_call`` item per tool call (the calls of one model turn
are one assistant message in convmem), a ``function_call_output`` per tool result.

``pop_item`` never destroys history: it moves the active leaf back (or, for one call of several,
stores the turn without it as a new version), so the popped item stays in the tree on its own
branch and the next ``add_items`` starts a new branch — an edit. The one exception is the very
first item of a conversation, which is deleted (a branch cannot be empty and keep its root).
``clear_session`` deletes the conversation's messages for real.

Reasoning items are the model's opaque working state: they are not stored (a later request
goes without them). Items of other kinds (files, computer use, …) and non-text content are
refused with ``InvalidMessage``, never silently dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from convmem.context.formats import responses_items
from convmem.engine import Conversation
from convmem.errors import InvalidMessage
from convmem.integrations.chat import append_chat

if TYPE_CHECKING:
    from agents.memory.session_settings import SessionSettings

T = TypeVar("T")

_TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
_SKIPPED = {"reasoning"}


class ConvmemSession:
    """The SDK's ``Session`` on one convmem conversation (its id is the session id)."""

    session_settings: SessionSettings | None = None

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.session_id = conversation.id

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = await _off_loop(self._items)
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        await _off_loop(lambda: self._add(items))

    async def pop_item(self) -> Any | None:
        return await _off_loop(self._pop)

    async def clear_session(self) -> None:
        await _off_loop(self._clear)

    # --- the synchronous work, in a worker thread -----------------------------------------------

    def _items(self) -> list[dict[str, Any]]:
        return [item for m in self.conversation.branch() for item in responses_items(m, m.content)]

    def _add(self, items: Sequence[Mapping[str, Any]]) -> None:
        for chat in _as_chat(items):
            append_chat(self.conversation, chat)

    def _pop(self) -> dict[str, Any] | None:
        branch = self.conversation.branch()
        if not branch:
            return None
        leaf = branch[-1]
        items = responses_items(leaf, leaf.content)
        popped = items[-1]
        if leaf.tool_calls and len(items) > 1:
            # one call of a turn: the turn without it is stored as a new version of the turn
            self.conversation.regenerate(
                leaf.id, leaf.content, tool_calls=leaf.tool_calls[:-1], metadata=leaf.metadata
            )
        elif leaf.parent_id is not None:
            self.conversation.switch_branch(leaf.parent_id)
        else:
            self.conversation.delete_message(leaf.id)
        return popped

    def _clear(self) -> None:
        for message in self.conversation.messages():
            if message.parent_id is None:
                self.conversation.delete_message(message.id)


async def _off_loop(work: Callable[[], T]) -> T:
    """The engine is synchronous: run it in a worker thread so the event loop never waits."""
    return await asyncio.to_thread(work)


def _as_chat(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Responses items as Chat Completions messages, the calls of one turn gathered onto one
    assistant message."""
    out: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind in _SKIPPED:
            continue
        if kind == "message":
            out.append({"role": item.get("role"), "content": _text(item.get("content"))})
        elif kind == "function_call":
            function = {"name": item["name"], "arguments": item.get("arguments") or "{}"}
            call = {"id": item["call_id"], "type": "function", "function": function}
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = _text(item.get("output"))
            out.append({"role": "tool", "content": output, "tool_call_id": item["call_id"]})
        else:
            raise InvalidMessage(f"Responses items of type {kind!r} cannot be stored")
    return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        field = _TEXT_PARTS.get(str(part.get("type"))) if isinstance(part, Mapping) else None
        if field is None:
            raise InvalidMessage("only text content can be stored")
        parts.append(part[field])
    return "\n".join(parts)
