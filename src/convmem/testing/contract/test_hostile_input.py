"""Hostile values in every field a caller sets are refused the same way on every backend: a
clear error from the convmem tree (InvalidInput), nothing written — never a driver error, a
raw UnicodeEncodeError or a value one backend keeps and another refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

import convmem
from convmem.testing.harness import Backend

NUL = "a\x00b"
SURROGATE = "a\ud800b"
HUGE = "x" * (2 * 1024 * 1024)


def _writes(memory: convmem.Memory, value: str) -> dict[str, Callable[[], Any]]:
    alice = memory.scope("acme", "alice")
    conv = alice.conversation(alice.conversations()[0].id)
    call = convmem.ToolCall

    return {
        "title": lambda: alice.create_conversation(title=value),
        "conversation metadata": lambda: alice.create_conversation(metadata={"k": value}),
        "content": lambda: conv.append("user", value),
        "metadata value": lambda: conv.append("user", "hi", metadata={"k": value}),
        "metadata key": lambda: conv.append("user", "hi", metadata={value: 1}),
        "name": lambda: conv.append("user", "hi", metadata={"name": value}),
        "tool call id": lambda: conv.append("assistant", "", tool_calls=[call(value, "f", "{}")]),
        "tool call name": lambda: conv.append("assistant", "", tool_calls=[call("c", value, "{}")]),
        "tool call arguments": lambda: conv.append(
            "assistant", "", tool_calls=[call("c", "f", json.dumps({"a": value}))]
        ),
        "user pin": lambda: alice.pin(value),
        "conversation pin": lambda: conv.pin(value),
        "memory text": lambda: alice.remember(value),
        "memory subject": lambda: alice.remember("I like tea.", subject=value),
        "memory purpose": lambda: alice.remember("I like tea.", purpose=value),
        "proposal text": lambda: alice.propose(value),
        "tenant": lambda: memory.scope(value, "u").create_conversation(),
        "user": lambda: memory.scope("acme", value).create_conversation(),
    }


FIELD_NAMES = [
    "title", "conversation metadata", "content", "metadata value", "metadata key", "name",
    "tool call id", "tool call name", "tool call arguments", "user pin", "conversation pin",
    "memory text", "memory subject", "memory purpose", "proposal text", "tenant", "user",
]  # fmt: skip


@pytest.mark.parametrize("field", FIELD_NAMES)
@pytest.mark.parametrize("value", [NUL, SURROGATE], ids=["nul", "lone-surrogate"])
def test_unstorable_characters_are_refused_alike(
    memory: convmem.Memory, backend: Backend, field: str, value: str
) -> None:
    memory.scope("acme", "alice").create_conversation(title="t")
    before = backend.fingerprint()
    with pytest.raises(convmem.InvalidInput) as raised:
        _writes(memory, value)[field]()
    assert value not in str(raised.value)
    assert backend.fingerprint() == before


@pytest.mark.parametrize(
    "field", ["conversation metadata", "metadata value", "name", "memory subject", "memory purpose"]
)
def test_oversized_side_fields_are_refused(
    memory: convmem.Memory, backend: Backend, field: str
) -> None:
    memory.scope("acme", "alice").create_conversation(title="t")
    before = backend.fingerprint()
    with pytest.raises(convmem.InvalidInput):
        _writes(memory, HUGE)[field]()
    assert backend.fingerprint() == before


@pytest.mark.parametrize("bad", [2**63, 2**70, "3", 1.5, True, None], ids=repr)
def test_counts_out_of_range_or_of_the_wrong_type_are_refused(
    memory: convmem.Memory, backend: Backend, bad: object
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="t")
    conv.append("user", "I like tea.")
    alice.remember("I like tea.")
    before = backend.fingerprint()
    calls: dict[str, Callable[[], Any]] = {
        "search k": lambda: conv.search("tea", k=bad),  # type: ignore[arg-type]
        "memory search k": lambda: alice.search_memories("tea", k=bad),  # type: ignore[arg-type]
        "limit": lambda: alice.conversations(limit=bad),  # type: ignore[arg-type]
        "offset": lambda: alice.conversations(offset=bad),  # type: ignore[arg-type]
        "retention_days": lambda: memory.set_tenant_policy("acme", retention_days=bad),  # type: ignore[arg-type]
    }
    for name, call in calls.items():
        if bad is None and name == "retention_days":
            continue  # None clears the retention period
        with pytest.raises(convmem.InvalidInput):
            call()
        assert backend.fingerprint() == before, name


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "lone-surrogate"])
def test_ids_that_cannot_exist_are_refused_alike(
    memory: convmem.Memory, backend: Backend, bad: str
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="t")
    conv.append("user", "I like tea.")
    before = backend.fingerprint()
    lookups: dict[str, Callable[[], Any]] = {
        "conversation": lambda: alice.conversation(bad),
        "message": lambda: alice.message(bad),
        "branch": lambda: conv.branch(bad),
        "switch branch": lambda: conv.switch_branch(bad),
        "siblings": lambda: conv.siblings(bad),
        "edit": lambda: conv.edit(bad, "x"),
        "delete message": lambda: conv.delete_message(bad),
        "parent": lambda: conv.append("user", "x", parent_id=bad),
        "tool call id": lambda: conv.append("tool", "x", tool_call_id=bad),
        "memory get": lambda: alice.memories.get(bad),
        "memory delete": lambda: alice.memories.delete(bad),
        "memory confirm": lambda: alice.memories.confirm(bad),
        "memory reject": lambda: alice.memories.reject(bad),
        "memory update": lambda: alice.memories.update(bad, "I like coffee."),
        "memory restore": lambda: alice.memories.restore(bad),
        "memory undo": lambda: alice.memories.undo(bad),
        "memory would replace": lambda: alice.memories.would_replace(bad, "I like tea."),
        "memory resolve": lambda: alice.memories.resolve(bad),
        "unpin": lambda: alice.unpin(bad),
        "source message": lambda: alice.remember("I like milk.", source_message_id=bad),
        "key name": lambda: memory.keys.create("acme", "user", user="zed", name=bad),
        "revoke key": lambda: memory.keys.revoke("acme", bad),
    }
    for name, call in lookups.items():
        with pytest.raises(convmem.InvalidInput):
            call()
        assert backend.fingerprint() == before, name


@pytest.mark.parametrize("bad", ["a\x01b", "a\tb", "\u202eecila", "a\x7fb"], ids=repr)
def test_identifiers_refuse_control_and_bidi_characters(memory: convmem.Memory, bad: str) -> None:
    with pytest.raises(convmem.InvalidInput):
        memory.scope("acme", bad)
    with pytest.raises(convmem.InvalidInput):
        memory.scope(bad, "alice")


EDGES = {
    "year 1 at +14:00": datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
    "9999-12-31 at -14:00": datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-14))),
}


@pytest.mark.parametrize("when", list(EDGES), ids=list(EDGES))
def test_datetimes_that_do_not_exist_in_utc_are_refused_alike(
    memory: convmem.Memory, backend: Backend, when: str
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="t")
    conv.append("user", "I like tea.")
    before = backend.fingerprint()
    value = EDGES[when]
    with pytest.raises(convmem.InvalidMessage):
        conv.append("user", "hi", created_at=value)
    with pytest.raises(convmem.InvalidInput):
        alice.remember("I like coffee.", expires_at=value)
    with pytest.raises(convmem.InvalidQuery):
        conv.search("tea", since=value)
    with pytest.raises(convmem.InvalidQuery):
        conv.search("tea", until=value)
    assert backend.fingerprint() == before


def test_the_edges_of_the_calendar_are_kept_alike(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="t")
    first = datetime(1, 1, 1, tzinfo=UTC)
    last = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert conv.append("user", "The first day.", created_at=first).created_at == first
    assert conv.append("user", "The last day.", created_at=last).created_at == last
    assert [m.created_at for m in conv.messages()] == [first, last]
    assert [h.message.content for h in conv.search("day", since=last)] == ["The last day."]
