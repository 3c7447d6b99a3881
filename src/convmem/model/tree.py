"""The message tree's rules as pure checks over values; each raises before anything is written."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from convmem.errors import ContentTooLarge, InvalidIdentifier, InvalidInput, InvalidMessage
from convmem.model.messages import ROLES, Message, NewMessage, ToolCall

DEFAULT_MAX_CONTENT_BYTES = 1_000_000
MAX_METADATA_BYTES = 64 * 1024
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Every identifier (tenant, user, conversation, message, memory, key …) is at most this many
# bytes of UTF-8 (256 ASCII characters). Ids are bound into index words: PostgreSQL's full-text
# search refuses a word past 2,047 bytes, and a tenant and a user (or a tenant and a conversation)
# are hex-encoded into one, so two ids of 256 bytes stay well within it on every backend.
MAX_IDENTIFIER_BYTES = 256
# Counts (k, limit, offset, days) fit a signed 32-bit integer: every backend binds them as an
# integer column or parameter, and no real caller needs more.
MAX_COUNT = 2**31 - 1


def normalise_created_at(value: datetime | None) -> datetime:
    """An aware timestamp; a naive one (typical of imports) is taken as UTC."""
    if value is None:
        return datetime.now(UTC)
    return aware_utc(value, "created_at", error=InvalidMessage)


def aware_utc(value: object, what: str, *, error: type[InvalidInput] = InvalidInput) -> datetime:
    """A datetime (a naive one taken as UTC) that exists in UTC: year 1 at +14:00 or 9999-12-31
    at -14:00 does not, and one backend would refuse it while another kept it."""
    if not isinstance(value, datetime):
        raise error(f"{what} must be a datetime")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        value.astimezone(UTC)
    except OverflowError as exc:
        raise error(f"{what} is out of range (years 1 to 9999 in UTC)") from exc
    return value


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None or (isinstance(metadata, Mapping) and not metadata):
        return {}  # nothing to check (most messages, and every one of an import)
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
        raise InvalidMessage("metadata must be a mapping with string keys")
    try:
        text = json.dumps(dict(metadata), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidMessage("metadata must be JSON-serialisable") from exc
    size = len(_utf8(text, "metadata"))
    if size > MAX_METADATA_BYTES:
        raise InvalidMessage(f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES} bytes")
    loaded: dict[str, Any] = json.loads(text)
    _check_json_strings(loaded, "metadata")
    return loaded


def _check_json_strings(value: object, what: str) -> None:
    """Every key and string of a JSON value is storable text: JSON escapes can carry a NUL or a
    lone surrogate, which PostgreSQL's jsonb refuses and SQLite would keep."""
    if isinstance(value, str):
        _utf8(value, what)
        if "\x00" in value:
            raise InvalidMessage(f"{what} must not contain NUL characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json_strings(key, what)
            _check_json_strings(item, what)
    elif isinstance(value, list):
        for item in value:
            _check_json_strings(item, what)


def _utf8(text: str, what: str) -> bytes:
    """The text as UTF-8; lone surrogates (which no backend can store) are refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidMessage(f"{what} is not valid unicode (lone surrogates)") from exc


def check_count(value: object, what: str, *, minimum: int = 1) -> int:
    """A k, limit, offset or number of days: a real int (not a bool) within what every backend
    binds as an integer."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise InvalidInput(f"{what} must be an integer from {minimum} to {MAX_COUNT}")
    return value


def check_text(content: object, *, max_bytes: int, what: str = "message content") -> str:
    if not isinstance(content, str):
        raise InvalidMessage(f"{what} must be a string")
    size = len(_utf8(content, what))  # encoded once: up to max_bytes on every append and assemble
    if "\x00" in content:  # PostgreSQL cannot store it; every backend refuses it alike
        raise InvalidMessage(f"{what} must not contain NUL characters")
    if size > max_bytes:
        raise ContentTooLarge(size, max_bytes)
    return content


def _check_tool_calls(calls: Sequence[ToolCall], *, max_bytes: int) -> None:
    seen: set[str] = set()
    for call in calls:
        if not isinstance(call, ToolCall):
            raise InvalidMessage("tool_calls must be ToolCall values")
        if not isinstance(call.id, str) or not call.id.strip():
            raise InvalidMessage("a tool call needs a non-empty id")
        check_text(call.id, max_bytes=256, what="a tool call id")
        if call.id in seen:
            raise InvalidMessage(f"tool call id {call.id!r} appears twice in one message")
        seen.add(call.id)
        if not isinstance(call.name, str) or not call.name.strip():
            raise InvalidMessage(f"tool call {call.id!r} needs a name")
        check_text(call.name, max_bytes=256, what=f"tool call {call.id!r}: the name")
        check_text(call.arguments, max_bytes=max_bytes, what=f"tool call {call.id!r}: arguments")
        try:
            arguments = call.arguments_object()
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidMessage(f"tool call {call.id!r}: arguments must be a JSON object") from exc
        _check_json_strings(arguments, f"tool call {call.id!r}: arguments")


def check_new_message(message: NewMessage, *, max_bytes: int) -> None:
    """Shape rules that need no other message."""
    if message.role not in ROLES:
        raise InvalidMessage(f"unknown role {message.role!r}; use one of {', '.join(ROLES)}")
    check_text(message.content, max_bytes=max_bytes)
    calls = tuple(message.tool_calls)
    if calls and message.role != "assistant":
        raise InvalidMessage("only assistant messages may carry tool calls")
    _check_tool_calls(calls, max_bytes=max_bytes)
    if message.role == "tool":
        if not isinstance(message.tool_call_id, str) or not message.tool_call_id:
            raise InvalidMessage("a tool message needs the tool_call_id it answers")
        check_text(message.tool_call_id, max_bytes=256, what="tool_call_id")
    elif message.tool_call_id is not None:
        raise InvalidMessage("only tool messages carry a tool_call_id")
    if message.role in ("user", "system") and not message.content.strip():
        raise InvalidMessage(f"a {message.role} message needs content")
    if message.role == "assistant" and not calls and not message.content.strip():
        raise InvalidMessage("an assistant message needs content or tool calls")


def open_tool_calls(run: Sequence[Message]) -> set[str]:
    """Calls still unanswered, given the run above a new message: its parent, then up through
    tool results to the assistant message that made the calls (newest first)."""
    answered: set[str] = set()
    for message in run:
        if message.role == "tool":
            if message.tool_call_id is not None:
                answered.add(message.tool_call_id)
            continue
        if message.role == "assistant":
            return {call.id for call in message.tool_calls} - answered
        break
    return set()


def check_tool_result(message: NewMessage, run: Sequence[Message]) -> None:
    """A tool result must answer an open call of the assistant message directly above it."""
    if message.role != "tool":
        return
    if message.tool_call_id not in open_tool_calls(run):
        raise InvalidMessage("the tool result answers no open tool call on its branch")


def check_identifier(value: object, what: str) -> str:
    """An id every backend can store and search by: 1 to ``MAX_IDENTIFIER_BYTES`` bytes of
    UTF-8, without control characters. The one place the limit is checked, for every surface
    (the library raises ``InvalidIdentifier``; the service answers 400)."""
    if not isinstance(value, str):  # missing or of the wrong type: a malformed argument
        raise InvalidInput(f"{what} must be a non-empty string")
    if not value:
        raise InvalidIdentifier(f"{what} must be a non-empty string")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidIdentifier(f"{what} is not valid unicode (lone surrogates)") from exc
    if size > MAX_IDENTIFIER_BYTES:
        raise InvalidIdentifier(
            f"{what} is {size} bytes in UTF-8; the limit is {MAX_IDENTIFIER_BYTES} bytes"
        )
    # control characters and bidirectional overrides: an id is shown in logs, audits and pages
    if any(unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS for ch in value):
        raise InvalidIdentifier(f"{what} must not contain control characters")
    return value
