"""Export: all of a user's own data as JSON-ready values, nothing derived, nobody else's."""

from __future__ import annotations

import json

import convmem
from convmem import ToolCall
from convmem.testing.harness import Backend


def test_export_holds_the_users_records_and_nothing_derived(backend: Backend) -> None:
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:  # vectors are written
        check_export(memory)


def check_export(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Trip")
    first = conv.append("user", "Remember that I prefer aisle seats.", metadata={"ext_id": "D1:3"})
    conv.append("assistant", "", tool_calls=[ToolCall(id="c1", name="search", arguments="{}")])
    conv.append("tool", "3 flights found", tool_call_id="c1")
    conv.append("assistant", "Booked the aisle.")
    conv.pin("Answer briefly.")
    alice.pin("Use metric units.")
    alice.set_memory_enabled(False)
    bob = memory.scope("acme", "bob")
    bob.create_conversation(title="Bob's").append("user", "bob's own words")
    bob.remember("I prefer window seats.")

    exported = alice.export()
    assert (exported["format"], exported["tenant"], exported["user"]) == (
        "convmem-export/1", "acme", "alice",
    )  # fmt: skip
    assert exported["memory_enabled"] is False
    text = json.dumps(exported)  # JSON-ready as it is: no bytes, no datetimes
    data = exported["data"]
    assert [c["id"] for c in data["conversations"]] == [conv.id]
    assert sorted(m["id"] for m in data["messages"]) == sorted(m.id for m in conv.messages())
    assert first.content in {m["content"] for m in data["messages"]}
    saved = first.notices[0].memory
    assert saved is not None
    assert [(m["id"], m["text"]) for m in data["memories"]] == [(saved.id, saved.text)]
    assert {p["text"] for p in data["pinned_instructions"]} == {
        "Answer briefly.", "Use metric units.",
    }  # fmt: skip
    assert {"memory.saved", "settings.memory_enabled"} <= {
        e["action"] for e in data["audit_events"]
    }
    assert "bob" not in text and "window seats" not in text
    for table, rows in data.items():  # derived data (index, vectors) is not the user's record
        for row in rows:
            assert not any("vector" in column or "embedding" in column for column in row), table


def test_an_empty_user_exports_empty_tables(memory: convmem.Memory) -> None:
    exported = memory.scope("acme", "nobody").export()
    assert exported["memory_enabled"] is True
    assert {table: rows for table, rows in exported["data"].items() if rows} == {}
