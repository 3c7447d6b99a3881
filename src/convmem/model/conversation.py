"""Conversation values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ConversationRecord:
    """A conversation's record. ``active_leaf_id`` is the tip of the branch the user sees."""

    id: str
    tenant_id: str
    user_id: str
    title: str | None
    temporary: bool
    active_leaf_id: str | None
    metadata: Mapping[str, Any]
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "temporary": self.temporary,
            "active_leaf_id": self.active_leaf_id,
            "metadata": dict(self.metadata),
            "created_at": self.created_at.isoformat(),
        }
