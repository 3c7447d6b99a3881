"""Engine values to JSON-ready dicts (the response models validate the shape)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from convmem.model.memory import MemoryHit, MemoryNotice
from convmem.model.messages import Message


def jsonable(value: Any) -> Any:
    """Any engine value as JSON: ``to_dict`` where a value has one, else its fields."""
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return value


def notice(value: MemoryNotice) -> dict[str, Any]:
    return {
        "status": value.status,
        "text": value.text,
        "reason": value.reason,
        "memory": value.memory.to_dict() if value.memory else None,
        "memory_ids": list(value.memory_ids),
        "superseded": [{"id": m.id, "text": m.text} for m in value.superseded],
        "records": [{"id": m.id, "text": m.text} for m in value.records],
    }


def appended(message: Message) -> dict[str, Any]:
    return {**message.to_dict(), "notices": [notice(n) for n in message.notices]}


def hit(value: MemoryHit) -> dict[str, Any]:
    return {
        "memory": value.memory.to_dict(),
        "score": value.score,
        "retrievers": list(value.retrievers),
    }
