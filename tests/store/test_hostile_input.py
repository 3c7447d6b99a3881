"""Hostile values in every field a caller sets are refused the same way on every backend: a
clear error from the convmem tree (InvalidInput), nothing written — never a driver error, a
raw UnicodeEncodeError or a value one backend keeps and another refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import convmem
from tests.store.backends import Backend

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
        "memory purpose": lambda: alice.remember(
            "I like tea.",
            purpose=value,  # type: ignore[call-arg]  # not in MemoryFields, yet forwarded
        ),
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
