"""Stored summaries and the jobs that build them off the request path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from convmem.model.snapshot import Snapshot


@dataclass(frozen=True)
class SummaryCost:
    """What building a summary cost: model calls and the tokens they read and wrote."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: SummaryCost) -> SummaryCost:
        return SummaryCost(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.seconds + other.seconds,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "seconds": round(self.seconds, 3),
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> SummaryCost:
        return cls(
            int(value.get("calls", 0)),
            int(value.get("input_tokens", 0)),
            int(value.get("output_tokens", 0)),
            float(value.get("seconds", 0.0)),
        )


@dataclass(frozen=True)
class SummaryRecord:
    """A summary of a branch from its root through ``through_message_id``, inclusive.

    The path from the root to a message is unique, so the record is valid for every branch that
    contains its through-message and for no other. It was built from ``previous_id`` (the nearest
    ancestor summary, None for the first) and the ``segment_length`` messages after it;
    ``covered_hash`` chains ``base_hash`` (the previous summary's) with those message ids, so a use
    can check that the messages it covers are still exactly the ones it was built from.
    """

    id: str
    conversation_id: str
    through_message_id: str
    through_depth: int
    covered_hash: str
    base_hash: str
    segment_length: int
    previous_id: str | None
    summarizer: str
    prompt_version: str
    snapshot: Snapshot
    rendered: str
    tokens: int  # of ``rendered`` as a system message, in the conservative estimate
    cost: SummaryCost = field(default_factory=SummaryCost)
    fallback_reason: str | None = None
    created_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "through_message_id": self.through_message_id,
            "through_depth": self.through_depth,
            "covered_hash": self.covered_hash,
            "previous_id": self.previous_id,
            "segment_length": self.segment_length,
            "summarizer": self.summarizer,
            "prompt_version": self.prompt_version,
            "snapshot": self.snapshot.to_dict(),
            "rendered": self.rendered,
            "tokens": self.tokens,
            "cost": self.cost.to_dict(),
            "fallback_reason": self.fallback_reason,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


JobStatus = Literal["pending", "running", "done", "failed"]


@dataclass(frozen=True)
class Job:
    """A durable unit of background work. ``key`` makes enqueueing idempotent."""

    id: str
    tenant_id: str
    kind: str
    key: str
    conversation_id: str | None
    payload: Mapping[str, Any]
    status: JobStatus
    attempts: int
    max_attempts: int
    lease_owner: str | None
    lease_expires_at: float | None
    run_after: float
    last_error: str | None
    created_at: datetime
    updated_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tenant_id": self.tenant_id,
            "kind": self.kind,
            "key": self.key,
            "conversation_id": self.conversation_id,
            "payload": dict(self.payload),
            "status": self.status,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "lease_owner": self.lease_owner,
            "lease_expires_at": self.lease_expires_at,
            "last_error": self.last_error,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }
