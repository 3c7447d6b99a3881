"""Long-term memory values: records, notices, audit events, search hits."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

Category = Literal["preference", "profile", "constraint", "decision", "fact"]
CATEGORIES: tuple[str, ...] = get_args(Category)
SourceKind = Literal["user_explicit", "inference", "confirmed_inference", "admin", "import"]
Status = Literal["proposed", "confirmed", "superseded", "rejected"]
STATUSES: tuple[str, ...] = get_args(Status)
# Why a proposal was made: a plain statement in a turn ("I prefer window seats"), a statement
# repeated across conversations (consolidation), a model's extraction, or the application's own
# ``propose`` call. The page says it beside the turns it cites.
Basis = Literal["statement", "repeated", "model", "application"]
BASES: tuple[str, ...] = get_args(Basis)


@dataclass(frozen=True)
class MemoryRecord:
    """One short, atomic statement about a user, with its provenance."""

    id: str
    tenant_id: str
    user_id: str
    scope: str  # "user" or "project:<id>"
    category: Category
    subject_key: str  # what it is about; a newer statement on the same subject supersedes
    text: str
    source_kind: SourceKind
    source_message_id: str | None
    status: Status
    supersedes_id: str | None
    conflicts_with_id: str | None  # set while two confirmed records disagree, until resolved
    sensitivity: str
    purpose: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    # a proposal's confidence (0..1) and why it was proposed (``BASES``); None for a memory the
    # user said or that was imported or added directly
    confidence: float | None = None
    basis: str | None = None

    @property
    def current(self) -> bool:
        return self.status == "confirmed"

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("created_at", "updated_at", "expires_at"):
            value = out[key]
            out[key] = value.isoformat() if value is not None else None
        return out


@dataclass(frozen=True)
class MemoryNotice:
    """What happened to a memory because of a call or a message ("Memory updated").

    ``status``: saved | proposed | blocked | forgotten | ambiguous. ``text`` is the statement
    concerned (for the user's eyes; never logged); ``reason`` a stable code when blocked (or
    ``several_matches`` when a forget request named memories on several subjects,
    ``different_value`` when it named a slot that holds another value: nothing was deleted,
    ``memory_ids`` lists them; ``no_match`` when it named nothing kept; ``conflict`` when a
    statement differs from a kept one without saying it is newer: it waits as a proposal).
    ``superseded`` holds the records a save replaced, so the notice can name both texts and
    offer to undo (``memories.restore``). ``records`` holds the other memories the notice is
    about: the ones forgotten, the ones an ambiguous forget asks about, and the current ones a
    conflicting proposal would replace once confirmed.
    """

    status: str
    text: str
    reason: str | None = None
    memory: MemoryRecord | None = None
    memory_ids: tuple[str, ...] = field(default_factory=tuple)
    superseded: tuple[MemoryRecord, ...] = field(default_factory=tuple)
    records: tuple[MemoryRecord, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class AuditEvent:
    """What happened to which object, by whom, when. Never the content."""

    id: str
    user_id: str
    actor: str
    action: str
    object_kind: str
    object_id: str
    at: datetime
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["at"] = self.at.isoformat()
        return out


@dataclass(frozen=True)
class MemoryHit:
    """A ranked search result: the record, its score and which retrievers found it."""

    memory: MemoryRecord
    score: float
    retrievers: tuple[str, ...]
