"""State snapshots: what a conversation has settled, kept when its turns leave the window.

A snapshot is a plain value. Every item quotes or restates something said in the conversation and
names the messages it came from (``sources``), so a person can check each note against its proof.
``subject`` is an optional key: a newer decision (or preference, fact) on the same subject replaces
the older one instead of standing beside it.

When a source is a tool's result, the item also carries a :class:`ToolSource` for it — the tool's
name and the result's time — so a reader can tell what a system answered (and when) from what a
person claimed. Convmem derives these from the stored messages, never from a summarizer's output;
a stored snapshot without them (written before they existed) reads as notes with none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

CATEGORIES: tuple[str, ...] = (
    "goal",
    "decisions",
    "constraints",
    "open_tasks",
    "open_questions",
    "preferences",
    "facts",
)

CATEGORY_TITLES: Mapping[str, str] = {
    "goal": "Goal",
    "decisions": "Decisions",
    "constraints": "Constraints",
    "open_tasks": "Open tasks",
    "open_questions": "Open questions",
    "preferences": "Preferences",
    "facts": "Facts",
}


class SnapshotSchemaError(ValueError):
    """A snapshot document does not match the schema; the message names the field, not content."""


@dataclass(frozen=True)
class ToolSource:
    """A source message that is a tool's result: which tool answered (the name on the assistant's
    call the result answers; None if that call is not on the branch) and when (the result
    message's ``created_at``, in UTC)."""

    message_id: str
    tool: str | None
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.message_id, "tool": self.tool, "at": self.at.isoformat()}

    @classmethod
    def from_dict(cls, value: object, where: str) -> ToolSource:
        if not isinstance(value, Mapping):
            raise SnapshotSchemaError(f"{where} must be an object")
        source, tool, at = value.get("source"), value.get("tool"), value.get("at")
        if not isinstance(source, str) or not source:
            raise SnapshotSchemaError(f"{where}.source must be a message id")
        if tool is not None and not isinstance(tool, str):
            raise SnapshotSchemaError(f"{where}.tool must be a string or null")
        try:
            when = datetime.fromisoformat(at) if isinstance(at, str) else None
        except ValueError:
            when = None
        if when is None or when.tzinfo is None:
            raise SnapshotSchemaError(f"{where}.at must be an ISO time with a zone")
        return cls(source, tool, when.astimezone(UTC))


@dataclass(frozen=True)
class SnapshotItem:
    """One note: its text (identifiers, numbers and code verbatim), its source message ids, and
    for each source that is a tool's result, that tool's name and the result's time."""

    text: str
    sources: tuple[str, ...]
    subject: str | None = None
    tools: tuple[ToolSource, ...] = ()

    def tool_source(self, message_id: str) -> ToolSource | None:
        return next((t for t in self.tools if t.message_id == message_id), None)

    def to_dict(self) -> dict[str, Any]:
        value: dict[str, Any] = {"text": self.text, "sources": list(self.sources)}
        if self.subject is not None:
            value["subject"] = self.subject
        if self.tools:  # absent, not empty, so a note from a person serialises as it always did
            value["tools"] = [tool.to_dict() for tool in self.tools]
        return value

    @classmethod
    def from_dict(cls, value: object, where: str = "item") -> SnapshotItem:
        if not isinstance(value, Mapping):
            raise SnapshotSchemaError(f"{where} must be an object")
        text = value.get("text")
        sources = value.get("sources")
        subject = value.get("subject")
        if not isinstance(text, str) or not text.strip():
            raise SnapshotSchemaError(f"{where}.text must be a non-empty string")
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise SnapshotSchemaError(f"{where}.sources must be a list of message ids")
        if subject is not None and not isinstance(subject, str):
            raise SnapshotSchemaError(f"{where}.subject must be a string or null")
        raw_tools = value.get("tools", [])
        if not isinstance(raw_tools, list):
            raise SnapshotSchemaError(f"{where}.tools must be a list")
        tools = tuple(
            ToolSource.from_dict(tool, f"{where}.tools[{i}]") for i, tool in enumerate(raw_tools)
        )
        if not {tool.message_id for tool in tools} <= set(sources):
            raise SnapshotSchemaError(f"{where}.tools must name sources of the note")
        return cls(text.strip(), tuple(dict.fromkeys(sources)), subject or None, tools)


@dataclass(frozen=True)
class Snapshot:
    """Goal, decisions, constraints, open tasks, open questions, preferences and facts."""

    goal: tuple[SnapshotItem, ...] = ()
    decisions: tuple[SnapshotItem, ...] = ()
    constraints: tuple[SnapshotItem, ...] = ()
    open_tasks: tuple[SnapshotItem, ...] = ()
    open_questions: tuple[SnapshotItem, ...] = ()
    preferences: tuple[SnapshotItem, ...] = ()
    facts: tuple[SnapshotItem, ...] = ()

    def category(self, name: str) -> tuple[SnapshotItem, ...]:
        if name not in CATEGORIES:
            raise KeyError(name)
        items: tuple[SnapshotItem, ...] = getattr(self, name)
        return items

    def with_category(self, name: str, items: tuple[SnapshotItem, ...]) -> Snapshot:
        if name not in CATEGORIES:
            raise KeyError(name)
        return replace(self, **{name: items})

    def items(self) -> Iterator[tuple[str, SnapshotItem]]:
        """Every item with its category, in rendering order."""
        for name in CATEGORIES:
            for item in self.category(name):
                yield name, item

    def is_empty(self) -> bool:
        return not any(True for _ in self.items())

    def source_ids(self) -> set[str]:
        return {source for _, item in self.items() for source in item.sources}

    def to_dict(self) -> dict[str, Any]:
        return {name: [item.to_dict() for item in self.category(name)] for name in CATEGORIES}

    @classmethod
    def from_dict(cls, value: object) -> Snapshot:
        """Parse and validate a snapshot document (unknown keys are refused)."""
        if not isinstance(value, Mapping):
            raise SnapshotSchemaError("the snapshot must be a JSON object")
        unknown = set(value) - set(CATEGORIES)
        if unknown:
            raise SnapshotSchemaError(f"unknown snapshot keys: {', '.join(sorted(unknown))}")
        fields: dict[str, tuple[SnapshotItem, ...]] = {}
        for name in CATEGORIES:
            raw = value.get(name, [])
            if raw is None:
                raw = []
            if name == "goal" and isinstance(raw, Mapping):
                raw = [raw]
            if not isinstance(raw, list):
                raise SnapshotSchemaError(f"{name} must be a list")
            fields[name] = tuple(
                SnapshotItem.from_dict(item, f"{name}[{i}]") for i, item in enumerate(raw)
            )
        return cls(**fields)
