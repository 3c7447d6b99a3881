"""A ChatGPT data export (``conversations.json``) as import trees, branches included.

Each conversation's ``mapping`` is its message tree: an edited or regenerated turn is a second
child, as in convmem. A message addressed to a tool (``recipient`` other than ``all``) becomes an
assistant tool call named after the tool, and the tool's reply its result; nodes without a
message (the export's hidden root) are passed through to their children. Content the reader
cannot store as text (images, hidden reasoning, custom-instruction context) is counted in the
report, never silently dropped; an image inside a text message is kept as ``[image]``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from convmem.errors import InvalidInput
from convmem.importers.bulk import ImportNode, ImportTree
from convmem.importers.files import read_json
from convmem.model.messages import NewMessage, ToolCall

SOURCE = "openai-chat"
_TEXT_TYPES = {"text", "code", "execution_output", "tether_quote", "tether_browsing_display"}
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}


def read(path: str | Path) -> list[ImportTree]:
    """Every conversation of the export file."""
    data = read_json(path, "a ChatGPT export")
    if isinstance(data, Mapping):
        data = data.get("conversations", [data])
    if not isinstance(data, list):
        raise InvalidInput("a ChatGPT export is a list of conversations")
    return [_tree(conversation, n) for n, conversation in enumerate(data)]


def _when(value: Any) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    return None


def _tree(conversation: Any, position: int) -> ImportTree:
    if not isinstance(conversation, Mapping) or not isinstance(
        conversation.get("mapping"), Mapping
    ):
        raise InvalidInput(f"conversation {position} of the export has no mapping")
    mapping: Mapping[str, Any] = conversation["mapping"]
    source_id = str(conversation.get("id") or conversation.get("conversation_id") or position)
    started = _when(conversation.get("create_time"))
    skipped: Counter[str] = Counter()
    nodes = list(_nodes(mapping, started, skipped))
    title = conversation.get("title")
    return ImportTree(
        source_id=source_id,
        title=title if isinstance(title, str) and title else None,
        created_at=started,
        nodes=nodes,
        active_key=conversation.get("current_node"),
        skipped=dict(skipped),
    )


def _nodes(
    mapping: Mapping[str, Any], started: datetime | None, skipped: Counter[str]
) -> Iterator[ImportNode]:
    kept: set[str] = set()
    calls: dict[str, str] = {}  # node id of a tool call -> the tool it addressed

    def parent_of(node: Mapping[str, Any]) -> str | None:
        parent = node.get("parent")
        seen = 0
        while parent is not None and parent not in kept and seen < len(mapping):
            above = mapping.get(parent)
            parent = above.get("parent") if isinstance(above, Mapping) else None
            seen += 1
        return parent

    for key, node in _in_order(mapping):
        message = node.get("message")
        if not isinstance(message, Mapping):
            continue
        role = _ROLES.get(str((message.get("author") or {}).get("role")))
        text = _text(message.get("content"))
        if role is None or text is None:
            skipped["unsupported_content"] += 1
            continue
        recipient = message.get("recipient") or "all"
        if not text.strip() and not (role == "assistant" and recipient != "all"):
            skipped["empty_message"] += 1  # the export's hidden system and context turns
            continue
        parent = parent_of(node)
        when = _when(message.get("create_time")) or started
        new: NewMessage
        if role == "assistant" and recipient != "all":
            arguments = json.dumps({"input": text}, ensure_ascii=False)
            new = NewMessage("assistant", "", (ToolCall(key, str(recipient), arguments),),
                             created_at=when)  # fmt: skip
            calls[key] = str(recipient)
        elif role == "tool":
            if parent not in calls:
                skipped["tool_output_without_call"] += 1
                continue
            new = NewMessage("tool", text, tool_call_id=parent, created_at=when)
        else:
            new = NewMessage(role, text, created_at=when)  # type: ignore[arg-type]
        kept.add(key)
        yield ImportNode(key, parent, new)


def _in_order(mapping: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Parents before children (a node's parent resolves to a node already read)."""
    roots = [
        k for k, n in mapping.items() if isinstance(n, Mapping) and n.get("parent") not in mapping
    ]
    stack = list(reversed(roots))
    seen: set[str] = set()
    while stack:
        key = stack.pop()
        node = mapping.get(key)
        if key in seen or not isinstance(node, Mapping):
            continue
        seen.add(key)
        yield key, node
        stack.extend(reversed([c for c in node.get("children") or () if isinstance(c, str)]))


def _text(content: Any) -> str | None:
    """The message's text, or None when it holds none convmem can store."""
    if not isinstance(content, Mapping):
        return None
    kind = content.get("content_type")
    if kind in _TEXT_TYPES:
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if isinstance(content.get("result"), str):
            return str(content["result"])
    if kind in ("text", "multimodal_text"):
        parts = content.get("parts") or []
        pieces = [p if isinstance(p, str) else "[image]" for p in parts]
        return "\n".join(pieces)
    return None
