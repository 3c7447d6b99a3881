"""ConvmemStore: LangGraph's BaseStore on convmem memories, with the real langgraph."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytest.importorskip("langgraph")

from fastapi.testclient import TestClient
from langgraph.store.base import GetOp, PutOp, SearchOp

import convmem
from convmem.integrations.langgraph import ConvmemStore
from convmem.service import create_app

SECRET = "sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"


def test_put_get_delete_round_trip(memory: convmem.Memory, alice: convmem.Scope) -> None:
    store = ConvmemStore(memory, "acme", explicit=True)
    store.put(("alice",), "seat", {"text": "I prefer aisle seats.", "category": "preference"})
    store.put(("alice", "trip", "lisbon"), "hotel", {"name": "Casa", "nights": 3})
    item = store.get(("alice",), "seat")
    assert item is not None
    assert item.value == {"text": "I prefer aisle seats.", "category": "preference"}
    assert (item.namespace, item.key) == (("alice",), "seat")
    structured = store.get(("alice", "trip", "lisbon"), "hotel")
    assert structured is not None and structured.value == {"name": "Casa", "nights": 3}
    records = {m.subject_key: m for m in alice.memories.list()}
    assert records["seat"].scope == "user" and records["seat"].status == "confirmed"
    assert records["hotel"].scope == "project:trip/lisbon"
    store.put(("alice",), "seat", {"text": "I prefer window seats."})
    assert store.get(("alice",), "seat").value["text"] == "I prefer window seats."  # type: ignore[union-attr]
    statuses = sorted(m.status for m in alice.memories.list(status=None) if m.subject_key == "seat")
    assert statuses == ["confirmed", "superseded"]  # the history is kept
    store.delete(("alice",), "seat")
    assert store.get(("alice",), "seat") is None
    assert store.get(("bob",), "hotel") is None
    assert store.get(("alice",), "hotel") is None  # another scope


def test_a_blocked_write_raises_with_its_reason_and_stores_nothing(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    store = ConvmemStore(memory, "acme")
    with pytest.raises(convmem.NeverStoreViolation) as raised:
        store.put(("alice",), "keys", {"openai_key": SECRET})
    assert raised.value.reason == "credential"
    with pytest.raises(convmem.NeverStoreViolation) as health:
        store.put(("alice",), "health", {"text": "I was diagnosed with diabetes last year."})
    assert health.value.reason == "health"
    alice.set_memory_enabled(False)
    with pytest.raises(convmem.NeverStoreViolation) as off:
        store.put(("alice",), "seat", {"text": "I prefer aisle seats."})
    assert off.value.reason == "memory_off"
    assert alice.memories.list(status=None) == []
    assert SECRET not in str(alice.export())


def test_writes_are_proposals_on_the_memory_page(memory: convmem.Memory) -> None:
    store = ConvmemStore(memory, "acme")
    store.put(("alice",), "seat", {"text": "I prefer aisle seats."})
    store.put(("alice",), "seat", {"text": "I prefer window seats."})  # replaces its guess
    item = store.get(("alice",), "seat")
    assert item is not None and item.value["text"] == "I prefer window seats."
    alice = memory.scope("acme", "alice")
    (proposal,) = alice.memories.list()
    assert (proposal.status, proposal.text) == ("proposed", "I prefer window seats.")
    context = alice.create_conversation().assemble("Which seat?")
    assert proposal.id not in context.report.memory_ids  # never recalled until confirmed
    token = memory.keys.create("acme", "user", user="alice").token
    with TestClient(create_app(memory)) as client:
        page = client.get("/v1/memories", headers={"Authorization": f"Bearer {token}"}).json()
    assert [(m["id"], m["status"]) for m in page] == [(proposal.id, "proposed")]
    alice.memories.confirm(proposal.id)
    assert proposal.id in alice.create_conversation().assemble("Which seat?").report.memory_ids


def test_search_with_query_filters_and_namespaces(memory: convmem.Memory) -> None:
    store = ConvmemStore(memory, "acme", explicit=True)
    store.put(("alice",), "seat", {"text": "I prefer aisle seats on long flights."})
    store.put(("alice",), "food", {"text": "I am vegetarian."})
    store.put(("alice", "trip"), "hotel", {"kind": "hotel", "stars": 4, "city": "Lisbon"})
    store.put(("alice", "trip"), "car", {"kind": "car", "stars": 2, "city": "Porto"})
    store.put(("bob",), "seat", {"text": "I prefer aisle seats too."})
    hits = store.search(("alice",), query="aisle seats")
    assert [h.key for h in hits][:1] == ["seat"] and all(h.namespace[0] == "alice" for h in hits)
    assert hits[0].score is not None
    trip = store.search(("alice", "trip"), filter={"stars": {"$gte": 3}})
    assert [h.key for h in trip] == ["hotel"]
    assert [h.key for h in store.search(("alice", "trip"), filter={"city": "Porto"})] == ["car"]
    assert len(store.search(("alice",), limit=2)) == 2
    assert store.list_namespaces(prefix=("alice",)) == [("alice",), ("alice", "trip")]
    assert store.list_namespaces(prefix=("alice",), max_depth=1) == [("alice",)]
    with pytest.raises(convmem.InvalidInput):
        store.search(())


def test_ttl_sets_the_expiry(memory: convmem.Memory, alice: convmem.Scope) -> None:
    store = ConvmemStore(memory, "acme", explicit=True)
    store.put(("alice",), "plan", {"text": "I am in Lisbon this week."}, ttl=60)
    (record,) = alice.memories.list()
    assert record.expires_at is not None
    delta = record.expires_at - datetime.now(UTC)
    assert timedelta(minutes=58) < delta <= timedelta(minutes=60)


def test_async_batch(memory: convmem.Memory) -> None:
    store = ConvmemStore(memory, "acme", explicit=True)

    async def run() -> list[Any]:
        await store.aput(("alice",), "seat", {"text": "I prefer aisle seats."})
        return await store.abatch(
            [GetOp(("alice",), "seat"), SearchOp(("alice",), query="seats"),
             PutOp(("alice",), "seat", None), GetOp(("alice",), "seat")]
        )  # fmt: skip

    got, found, deleted, gone = asyncio.run(run())
    assert got.value["text"] == "I prefer aisle seats."
    assert [h.key for h in found] == ["seat"]
    assert deleted is None and gone is None
