"""Entity memory over HTTP: list and search (paginated), get with facts and who said each,
confirm or delete a fact, delete an entity (the facts go, the messages stay), promote a fact to
a memory through the consent and never-store path, and the tenant's switch that recalls facts
nobody confirmed."""

from __future__ import annotations

from typing import Any

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


def _ana(client: TestClient, h: dict[str, str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ana's entity as listed, and her facts."""
    (ana,) = client.get("/v1/entities", params={"q": "Ana"}, headers=h).json()
    facts: list[dict[str, Any]] = client.get(f"/v1/entities/{ana['id']}", headers=h).json()["facts"]
    return ana, facts


def test_promoting_a_fact_saves_a_memory_citing_its_message(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    _, first = _conversation(memory)
    h = auth(keys.alice)
    ana, facts = _ana(client, h)
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


def _recalled(client: TestClient, token: str) -> list[str]:
    """The fact ids a new conversation's request recalls for a question about Ana."""
    h = auth(token)
    conv = client.post("/v1/conversations", json={}, headers=h).json()
    ctx = client.post(
        f"/v1/conversations/{conv['id']}/assemble",
        json={"user_message": "How is my sister Ana doing?"}, headers=h,
    )  # fmt: skip
    assert ctx.status_code == 200, ctx.text
    ids: list[str] = ctx.json()["report"]["entity_fact_ids"]
    return ids


def test_facts_say_who_said_them_and_travel_only_once_confirmed(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    _, first = _conversation(memory)
    h = auth(keys.alice)
    ana, facts = _ana(client, h)
    speakers = {f["text"]: (f["speaker"], f["speaker_name"], f["status"]) for f in facts}
    assert speakers == {
        "My sister Ana Lopez moved to Porto last spring.": ("user", None, "proposed"),
        "Porto is a lovely city for Ana.": ("assistant", None, "proposed"),
    }
    assert _recalled(client, keys.alice) == []
    fact = next(f for f in facts if f["message_id"] == first)
    url = f"/v1/entities/{ana['id']}/facts/{fact['id']}"
    confirmed = client.post(f"{url}/confirm", headers=h)
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "confirmed" and confirmed.json()["id"] == fact["id"]
    assert _recalled(client, keys.alice) == [fact["id"]]
    # another principal's ids are 404, for confirm and delete alike
    assert client.post(f"{url}/confirm", headers=auth(keys.bob)).status_code == 404
    assert client.delete(url, headers=auth(keys.bob)).status_code == 404
    # the tenant's switch recalls the assistant's proposal too
    admin = auth(keys.acme_admin)
    put = client.put(
        "/v1/tenant/policy", json={"recall_unconfirmed_entity_facts": True}, headers=admin
    )
    assert put.status_code == 200 and put.json()["recall_unconfirmed_entity_facts"] is True
    assert set(_recalled(client, keys.alice)) == {f["id"] for f in facts}
    client.put("/v1/tenant/policy", json={}, headers=admin)
    # deleting the confirmed fact ends it; the message stays
    deleted = client.delete(url, headers=h)
    assert deleted.status_code == 200 and deleted.json() == {"deleted_ids": [fact["id"]]}
    assert client.delete(url, headers=h).status_code == 404
    assert _recalled(client, keys.alice) == []
    assert client.get(f"/v1/messages/{first}", headers=h).status_code == 200
    left = client.get(f"/v1/entities/{ana['id']}", headers=h).json()["facts"]
    assert [f["text"] for f in left] == ["Porto is a lovely city for Ana."]


def test_the_routes_and_schemas_are_in_the_openapi(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert "post" in spec["paths"]["/v1/entities/{entity_id}/facts/{fact_id}/confirm"]
    assert "delete" in spec["paths"]["/v1/entities/{entity_id}/facts/{fact_id}"]
    assert {"get"} <= set(spec["paths"]["/v1/entities"])
    assert {"get", "delete"} <= set(spec["paths"]["/v1/entities/{entity_id}"])
    assert "post" in spec["paths"]["/v1/entities/{entity_id}/facts/{fact_id}/promote"]
    assert {"EntityOut", "EntityFactOut"} <= set(spec["components"]["schemas"])


def test_an_entitys_statements_are_read_a_page_at_a_time(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    conv = memory.scope("acme", "alice").create_conversation(title="Porto")
    for n in range(30):
        conv.append("user", f"Day {n}: Porto was sunny and we walked {n} km.")
    h = auth(keys.alice)
    (porto,) = client.get("/v1/entities", params={"q": "Porto"}, headers=h).json()
    whole = client.get(f"/v1/entities/{porto['id']}", headers=h).json()["facts"]
    assert len(whole) == 30
    base = f"/v1/entities/{porto['id']}/facts"
    first = client.get(base, params={"limit": 12}, headers=h).json()
    second = client.get(base, params={"limit": 12, "offset": 12}, headers=h).json()
    last = client.get(base, params={"limit": 12, "offset": 24}, headers=h).json()
    assert [f["id"] for f in first + second + last] == [f["id"] for f in whole]
    assert len(last) == 6
    assert client.get(base, headers=auth(keys.bob)).status_code == 404
    assert client.get(base, params={"limit": 0}, headers=h).status_code == 422
