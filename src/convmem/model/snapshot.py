"""State snapshots: what a conversation has settled, kept when its turns leave the window.

A snapshot is a plain value. Every item quotes or restates something said in the conversation and
names the messages it came from (``sources``), so a person can check each note against its proof.
``subject`` is an optional key: a newer decision (or preference, fact) on the same subject replaces
the older one instead of standing beside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
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
class SnapshotItem:
    """One note: its text (identifiers, numbers and code verbatim) and its source message ids."""

    text: str
    sources: tuple[str, ...]
    subject: str | None = None

    def to_dict(self) -> dict[str, Any]:
        value: dict[str, Any] = {"text": self.text, "sources": list(self.sources)}
        if self.subject is not None:
            value["subject"] = self.subject
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
        return cls(text.strip(), tuple(dict.fromkeys(sources)), subject or None)


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
