"""The session tier's cached value — what ``request_state`` returned for a conversation's active
branch — to JSON and back, with the generations it is valid for.

JSON, not pickle: whoever can write to Redis must not be able to run code in every service
process. Rows go back through the stores' own ``message_from_row``, so a cached message is the
value the database would give."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from convmem.model.conversation import ConversationRecord
from convmem.model.keys import AssemblyRecord
from convmem.store.conversations import BranchRow, MessageRow, PinnedInstruction, pin_origin
from convmem.store.rows import Codec, message_from_row

FORMAT = 1
_CODEC = Codec(json=lambda value: value, time=datetime.fromisoformat)


@dataclass(frozen=True)
class Cached:
    """A conversation's state for requests on its active leaf, counted with one tokenizer.
    ``rows``: the branch from the leaf, newest first, as far as requests read it (``complete``:
    to the root). ``run`` and ``tags``: the Redis server run and the tenant, user and
    conversation generations it was read under; any other value means it is stale."""

    run: str
    tags: tuple[str, str, str]
    user: str
    conversation: ConversationRecord
    leaf_id: str | None
    pins: tuple[PinnedInstruction, ...]
    last_assembly: AssemblyRecord | None
    rows: tuple[BranchRow, ...]
    complete: bool

    def appended(self, new_rows: list[BranchRow], leaf_id: str) -> Cached | None:
        """After an append of ``new_rows`` (parents first) ending at the new active leaf
        ``leaf_id``: the state with them on top, or None when they do not extend this branch
        (an edit, a regeneration, a branch switch: read again)."""
        by_id = {row.message.id: row for row in new_rows}
        chain: list[BranchRow] = []
        at: str | None = leaf_id
        while at is not None and at in by_id:
            chain.append(by_id[at])
            at = by_id[at].message.parent_id
        if not chain or at != self.leaf_id:
            return None
        record = replace(self.conversation, active_leaf_id=leaf_id)
        return replace(self, conversation=record, leaf_id=leaf_id, rows=(*chain, *self.rows))


def branch_row(row: MessageRow, tokenizer: str) -> BranchRow:
    """A written message as ``branch`` reads it back with ``tokenizer``'s counts."""
    tokens = row.tokens.get(tokenizer)
    media = row.media_tokens.get(tokenizer, 0) if tokens is not None else 0
    message = _message(_message_out(row.message))  # as the database gives it back
    return BranchRow(message, tokens, row.estimate_tokens, row.estimate_before, media)


def encode(value: Cached) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "run": value.run,
            "tags": list(value.tags),
            "user": value.user,
            "conversation": _conversation_out(value.conversation),
            "leaf": value.leaf_id,
            "pins": [_pin_out(pin) for pin in value.pins],
            "last": None if value.last_assembly is None else _assembly_out(value.last_assembly),
            "rows": [_row_out(row) for row in value.rows],
            "complete": value.complete,
        },
        separators=(",", ":"),
    )


def decode(text: str | bytes) -> Cached | None:
    """The value, or None for one this version cannot read (an older format, damage)."""
    try:
        raw = json.loads(text)
        if raw.get("format") != FORMAT:
            return None
        tags = tuple(raw["tags"])
        assert len(tags) == 3
        return Cached(
            run=raw["run"],
            tags=(tags[0], tags[1], tags[2]),
            user=raw["user"],
            conversation=_conversation(raw["conversation"]),
            leaf_id=raw["leaf"],
            pins=tuple(_pin(pin) for pin in raw["pins"]),
            last_assembly=None if raw["last"] is None else _assembly(raw["last"]),
            rows=tuple(_row(row) for row in raw["rows"]),
            complete=bool(raw["complete"]),
        )
    except (ValueError, KeyError, TypeError, AssertionError):
        return None


def _conversation_out(record: ConversationRecord) -> list[Any]:
    return [
        record.id, record.tenant_id, record.user_id, record.title, record.temporary,
        record.active_leaf_id, dict(record.metadata), record.created_at.isoformat(),
    ]  # fmt: skip


def _conversation(raw: list[Any]) -> ConversationRecord:
    return ConversationRecord(
        raw[0], raw[1], raw[2], raw[3], bool(raw[4]), raw[5], raw[6],
        datetime.fromisoformat(raw[7]),
    )  # fmt: skip


def _pin_out(pin: PinnedInstruction) -> list[Any]:
    return [
        pin.id, pin.text, pin.conversation_id, pin.position, pin.created_at.isoformat(),
        pin.origin,
    ]  # fmt: skip


def _pin(raw: list[Any]) -> PinnedInstruction:
    return PinnedInstruction(
        raw[0], raw[1], raw[2], raw[3], datetime.fromisoformat(raw[4]), pin_origin(raw[5])
    )


def _assembly_out(record: AssemblyRecord) -> list[Any]:
    return [record.conversation_id, record.leaf_id, record.at.isoformat(), record.report]


def _assembly(raw: list[Any]) -> AssemblyRecord:
    return AssemblyRecord(raw[0], raw[1], datetime.fromisoformat(raw[2]), raw[3])


def _message_out(message: Any) -> list[Any]:
    # the columns of ``convmem.store.rows.MESSAGE_COLUMNS``, in order
    return [
        message.id, message.conversation_id, message.parent_id, message.depth, message.role,
        message.content, [call.to_dict() for call in message.tool_calls] or None,
        message.tool_call_id, json.loads(json.dumps(dict(message.metadata))),
        message.created_at.isoformat(), [part.to_dict() for part in message.parts] or None,
    ]  # fmt: skip


def _message(raw: list[Any]) -> Any:
    return message_from_row(raw, _CODEC)


def _row_out(row: BranchRow) -> list[Any]:
    return [
        _message_out(row.message), row.tokens, row.estimate_tokens, row.estimate_before,
        row.media_tokens,
    ]  # fmt: skip


def _row(raw: list[Any]) -> BranchRow:
    return BranchRow(_message(raw[0]), raw[1], raw[2], raw[3], raw[4])
