"""Row → value decoding that every backend shares: one column order per table, and one
constructor per value reading a row in that order.

The drivers differ only in the form some columns come back in — SQLite hands JSON and times
back as text, psycopg hands them back decoded — so each backend passes its ``Codec`` and the
rest (which column is which field, what a missing value means) lives here once.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from convmem.model.conversation import ConversationRecord
from convmem.model.keys import ApiKey
from convmem.model.memory import MemoryRecord
from convmem.model.messages import Message, ToolCall
from convmem.model.parts import part_from_dict
from convmem.model.snapshot import Snapshot
from convmem.model.summary import Job, SummaryCost, SummaryRecord
from convmem.model.tools import RegisteredTool, ToolSpec

MESSAGE_COLUMNS = (
    "m.id, m.conversation_id, m.parent_id, m.depth, m.role, m.content, m.tool_calls, "
    "m.tool_call_id, m.metadata, m.created_at, m.parts"
)
# where the columns a query selects after MESSAGE_COLUMNS start
MESSAGE_WIDTH = 11
CONVERSATION_COLUMNS = (
    "id, tenant_id, user_id, title, temporary, active_leaf_id, metadata, created_at"
)
MEMORY_COLUMNS = (
    "id, tenant_id, user_id, scope, category, subject_key, text, source_kind, "
    "source_message_id, status, supersedes_id, conflicts_with_id, sensitivity, purpose, "
    "created_at, updated_at, expires_at, confidence, basis"
)
# where the columns a query selects after MEMORY_COLUMNS start
MEMORY_WIDTH = 19
# the memory columns of the table aliased ``m``
PREFIXED_MEMORY_COLUMNS = ", ".join(f"m.{c.strip()}" for c in MEMORY_COLUMNS.split(","))
SUMMARY_COLUMNS = (
    "id, conversation_id, through_message_id, through_depth, covered_hash, base_hash, "
    "segment_length, previous_id, summarizer, prompt_version, snapshot, rendered, tokens, cost, "
    "fallback_reason, created_at"
)
JOB_COLUMNS = (
    "id, tenant_id, kind, key, conversation_id, payload, status, attempts, max_attempts, "
    "lease_owner, lease_expires_at, run_after, last_error, created_at, updated_at"
)
KEY_COLUMNS = (
    "id, tenant_id, role, acts_for_user, name, created_by, created_at, revoked_at, purposes"
)


@dataclass(frozen=True, slots=True)
class Codec:
    """How a backend's driver returns a JSON column and a time column."""

    json: Callable[[Any], Any]
    time: Callable[[Any], datetime]

    def optional_time(self, value: Any) -> datetime | None:
        return None if value is None else self.time(value)


def _as_is(value: Any) -> Any:
    return value


# a driver that decodes JSON and times itself
DECODED = Codec(json=_as_is, time=_as_is)


def export_bytes(value: Any) -> Any:
    """A column value as an export holds it: bytes (kept media) as base64 text, the rest as is."""
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def message_from_row(row: Sequence[Any], codec: Codec) -> Message:
    calls = tuple(ToolCall(**call) for call in codec.json(row[6])) if row[6] else ()
    return Message(
        id=row[0],
        conversation_id=row[1],
        parent_id=row[2],
        depth=row[3],
        role=row[4],
        content=row[5],
        tool_calls=calls,
        tool_call_id=row[7],
        metadata=codec.json(row[8]),
        created_at=codec.time(row[9]),
        parts=tuple(part_from_dict(part) for part in codec.json(row[10])) if row[10] else (),
    )


def conversation_from_row(row: Sequence[Any], codec: Codec) -> ConversationRecord:
    return ConversationRecord(
        id=row[0],
        tenant_id=row[1],
        user_id=row[2],
        title=row[3],
        temporary=bool(row[4]),
        active_leaf_id=row[5],
        metadata=codec.json(row[6]),
        created_at=codec.time(row[7]),
    )


def memory_from_row(row: Sequence[Any], codec: Codec) -> MemoryRecord:
    return MemoryRecord(
        id=row[0], tenant_id=row[1], user_id=row[2], scope=row[3], category=row[4],
        subject_key=row[5], text=row[6], source_kind=row[7], source_message_id=row[8],
        status=row[9], supersedes_id=row[10], conflicts_with_id=row[11], sensitivity=row[12],
        purpose=row[13], created_at=codec.time(row[14]), updated_at=codec.time(row[15]),
        expires_at=codec.optional_time(row[16]),
        confidence=None if row[17] is None else float(row[17]), basis=row[18],
    )  # fmt: skip


def summary_from_row(row: Sequence[Any], codec: Codec) -> SummaryRecord:
    return SummaryRecord(
        id=row[0], conversation_id=row[1], through_message_id=row[2], through_depth=row[3],
        covered_hash=row[4], base_hash=row[5], segment_length=row[6], previous_id=row[7],
        summarizer=row[8], prompt_version=row[9], snapshot=Snapshot.from_dict(codec.json(row[10])),
        rendered=row[11], tokens=row[12], cost=SummaryCost.from_dict(codec.json(row[13])),
        fallback_reason=row[14], created_at=codec.time(row[15]),
    )  # fmt: skip


def job_from_row(row: Sequence[Any], codec: Codec) -> Job:
    # the lease and run-after columns are epoch seconds (floats) in every backend
    return Job(
        id=row[0], tenant_id=row[1], kind=row[2], key=row[3], conversation_id=row[4],
        payload=codec.json(row[5]), status=row[6], attempts=row[7], max_attempts=row[8],
        lease_owner=row[9], lease_expires_at=row[10], run_after=row[11], last_error=row[12],
        created_at=codec.time(row[13]), updated_at=codec.time(row[14]),
    )  # fmt: skip


def api_key_from_row(row: Sequence[Any], codec: Codec) -> ApiKey:
    return ApiKey(
        id=row[0], tenant_id=row[1], role=row[2], user_id=row[3], name=row[4],
        created_by=row[5], created_at=codec.time(row[6]), revoked_at=codec.optional_time(row[7]),
        purposes=None if row[8] is None else tuple(p for p in row[8].split(",") if p),
    )  # fmt: skip


def key_purposes(key: ApiKey) -> str | None:
    """A key's purposes as stored: comma-separated names (each one of ``PURPOSES``, no comma
    in any), ``""`` for none, NULL for every purpose."""
    return None if key.purposes is None else ",".join(key.purposes)


TOOL_COLUMNS = "name, description, parameters, strict, use_when, risk, created_at, updated_at"


def tool_from_row(row: Sequence[Any], codec: Codec) -> RegisteredTool:
    strict = None if row[3] is None else bool(row[3])
    spec = ToolSpec(name=row[0], description=row[1], parameters=codec.json(row[2]), strict=strict)
    return RegisteredTool(
        spec=spec, use_when=tuple(codec.json(row[4])), risk=row[5],
        created_at=codec.time(row[6]), updated_at=codec.time(row[7]),
    )  # fmt: skip
