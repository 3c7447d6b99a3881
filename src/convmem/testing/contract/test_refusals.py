"""A refused write writes nothing, on every backend: memory writes blocked by the never-store
policy, the user's or the tenant's switch, or a temporary conversation; and bad input."""

from __future__ import annotations

import pytest

import convmem
from convmem.testing.harness import Backend

SECRET = "My API key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def test_blocked_memory_writes_write_nothing(memory: convmem.Memory, backend: Backend) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats.")
    temporary = alice.create_conversation(temporary=True)
    source = temporary.append("user", "I like tea.")
    before = backend.fingerprint()
    assert alice.remember(SECRET).status == "blocked"
    with pytest.raises(convmem.NeverStoreViolation):
        alice.remember(SECRET, strict=True)
    assert alice.remember("I like tea.", source_message_id=source.id).reason == (
        "temporary_conversation"
    )
    with pytest.raises(convmem.InvalidInput):
        alice.remember("   ")
    with pytest.raises(convmem.InvalidInput):
        alice.remember("I like tea.", category="mood")
    assert backend.fingerprint() == before


def test_switched_off_memory_writes_nothing(memory: convmem.Memory, backend: Backend) -> None:
    alice = memory.scope("acme", "alice")
    alice.set_memory_enabled(False)
    carol = memory.scope("initech", "carol")
    memory.set_tenant_policy("initech", memory_disabled=True)
    before = backend.fingerprint()
    assert alice.remember("I like tea.").reason == "memory_off"
    assert carol.remember("I like tea.").reason == "memory_disabled_for_tenant"
    assert backend.fingerprint() == before


def test_a_refused_request_in_a_message_stores_the_message_but_no_memory(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    message = conv.append("user", f"Remember that {SECRET}")
    assert [(n.status, n.reason) for n in message.notices] == [("blocked", "credential")]
    assert alice.memories.list(status=None, include_expired=True) == []
    assert [m.id for m in conv.messages()] == [message.id]
