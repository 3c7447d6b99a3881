"""Entity memory over HTTP: list and search (paginated), get with facts, delete (the facts go,
the messages stay), and promote a fact to a memory through the consent and never-store path."""

from __future__ import annotations

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth


def _conversation(memory: convmem.Memory) -> tuple[convmem.Conversation, str]:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Family")
    first = conv.append("user", "My sister Ana Lopez moved to Porto last spring.")
    conv.append("assistant", "Porto is a lovely city for Ana.")
    conv.append("user", "Our friend @bruno_dev visits Porto in June.")
    return conv, first.id


def test_list_search_paginate_and_get_with_facts(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    _conversation(memory)
    h = auth(keys.alice)
    listed = client.get("/v1/entities", headers=h)
    assert listed.status_code == 200, listed.text
    names = [e["name"] for e in listed.json()]
    assert {"Ana Lopez", "Porto", "@bruno_dev"} <= set(names)
    assert all(e["facts"] == [] for e in listed.json())
    page = client.get("/v1/entities", params={"limit": 1, "offset": 1}, headers=h).json()
    assert [e["name"] for e in page] == names[1:2]
    found = client.get("/v1/entities", params={"q": "how is my sister?"}, headers=h).json()
    assert [e["name"] for e in found] == ["Ana Lopez"]
    scoped = client.get("/v1/entities", params={"q": "ana", "scope": "project:x"}, headers=h)
    assert scoped.json() == []
    ana = client.get(f"/v1/entities/{found[0]['id']}", headers=h).json()
    assert ana["type"] == "person" and "my sister" in ana["aliases"]
    assert len(ana["facts"]) == 2 and all(f["entity_id"] == ana["id"] for f in ana["facts"])
    # bob sees none of it
    assert client.get("/v1/entities", headers=auth(keys.bob)).json() == []
    assert client.get(f"/v1/entities/{ana['id']}", headers=auth(keys.bob)).status_code == 404
    bad = client.get("/v1/entities", params={"limit": 0}, headers=h)
    assert bad.status_code == 422


def test_delete_removes_the_entity_and_its_facts_not_the_messages(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    _, first = _conversation(memory)
    h = auth(keys.alice)
    (ana,) = client.get("/v1/entities", params={"q": "Ana"}, headers=h).json()
    deleted = client.delete(f"/v1/entities/{ana['id']}", headers=h)
    assert deleted.status_code == 200 and deleted.json() == {"deleted_ids": [ana["id"]]}
    assert client.get(f"/v1/entities/{ana['id']}", headers=h).status_code == 404
    assert client.delete(f"/v1/entities/{ana['id']}", headers=h).status_code == 404
    assert client.get("/v1/entities", params={"q": "Ana"}, headers=h).json() == []
    assert client.get(f"/v1/messages/{first}", headers=h).status_code == 200
    assert "Ana Lopez" not in str(memory.scope("acme", "alice").export()["data"]["entities"])
    assert [e.action for e in memory.scope("acme", "alice").audit()][-1] == "entity.deleted"


def test_promoting_a_fact_saves_a_memory_citing_its_message(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    _, first = _conversation(memory)
    h = auth(keys.alice)
    (ana,) = client.get("/v1/entities", params={"q": "Ana"}, headers=h).json()
    facts = client.get(f"/v1/entities/{ana['id']}", headers=h).json()["facts"]
    fact = next(f for f in facts if f["message_id"] == first)
    promoted = client.post(f"/v1/entities/{ana['id']}/facts/{fact['id']}/promote", headers=h)
    assert promoted.status_code == 201, promoted.text
    saved = promoted.json()
    assert saved["status"] == "saved"
    assert saved["memory"]["text"] == fact["text"]
    assert saved["memory"]["source_message_id"] == first
    assert saved["memory"]["status"] == "confirmed"
    assert [m["text"] for m in client.get("/v1/memories", headers=h).json()] == [fact["text"]]
    missing = client.post(f"/v1/entities/{ana['id']}/facts/fact_nope/promote", headers=h)
    assert missing.status_code == 404
    # with memory off the promotion is refused and nothing is written
    memory.scope("acme", "alice").memories.delete(saved["memory"]["id"])
    assert client.put("/v1/settings", json={"memory_enabled": False}, headers=h).status_code == 200
    refused = client.post(f"/v1/entities/{ana['id']}/facts/{fact['id']}/promote", headers=h)
    assert refused.status_code == 422 and refused.json()["code"] == "never_store"
    assert fact["text"] not in refused.text
    assert memory.scope("acme", "alice").memories.list(status=None) == []


def test_the_routes_and_schemas_are_in_the_openapi(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"get"} <= set(spec["paths"]["/v1/entities"])
    assert {"get", "delete"} <= set(spec["paths"]["/v1/entities/{entity_id}"])
    assert "post" in spec["paths"]["/v1/entities/{entity_id}/facts/{fact_id}/promote"]
    assert {"EntityOut", "EntityFactOut"} <= set(spec["components"]["schemas"])
