"""The user's controls over HTTP: who am I, memory on/off, export, delete everything, audit."""

from __future__ import annotations

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth
from .world import build_world


def test_me_names_the_principal_for_each_role(client: TestClient, keys: Keys) -> None:
    assert client.get("/v1/me", headers=auth(keys.alice)).json()["user"] == "alice"
    app = client.get("/v1/me", headers=auth(keys.acme_app, user="bob")).json()
    assert (app["role"], app["tenant"], app["user"]) == ("app", "acme", "bob")
    admin = client.get("/v1/me", headers=auth(keys.globex_admin)).json()
    assert (admin["role"], admin["tenant"], admin["user"]) == ("admin", "globex", None)


def test_memory_off_stops_reading_and_writing(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    client.post("/v1/memories", json={"text": "I prefer tea"}, headers=h)
    off = client.put("/v1/settings", json={"memory_enabled": False}, headers=h)
    assert off.json() == {"memory_enabled": False}
    assert client.get("/v1/settings", headers=h).json() == {"memory_enabled": False}
    refused = client.post("/v1/memories", json={"text": "I prefer coffee"}, headers=h)
    assert refused.status_code == 422
    assert refused.json()["reason"] == "memory_off"
    assert client.get("/v1/memories/search", params={"q": "tea"}, headers=h).json() == []
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    sent = client.post(f"/v1/conversations/{cid}/messages",
                       json={"role": "user", "content": "Remember that I am tall."},
                       headers=h).json()  # fmt: skip
    assert [(n["status"], n["reason"]) for n in sent["notices"]] == [("blocked", "memory_off")]
    ctx = client.post(f"/v1/conversations/{cid}/assemble", json={}, headers=h).json()
    assert ctx["report"]["memory_ids"] == []
    assert client.put("/v1/settings", json={"memory_enabled": "no"}, headers=h).status_code == 422
    on = client.put("/v1/settings", json={"memory_enabled": True}, headers=h)
    assert on.json() == {"memory_enabled": True}


def test_export_is_a_download_of_everything_of_the_user(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    world = build_world(memory)
    response = client.get("/v1/export", headers=auth(keys.alice))
    assert response.status_code == 200
    assert response.headers["content-disposition"].startswith("attachment;")
    data = response.json()
    assert data["format"] == "convmem-export/1"
    assert (data["tenant"], data["user"]) == ("acme", "alice")
    assert world.memory in str(data["data"]["memories"])
    assert "I prefer aisle seats" in str(data["data"]["messages"])
    bob = client.get("/v1/export", headers=auth(keys.bob)).json()
    assert world.conversation not in str(bob)


def test_delete_everything_keeps_only_the_audit(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    world = build_world(memory)
    h = auth(keys.alice)
    counts = client.delete("/v1/data", headers=h).json()["deleted"]
    assert counts["messages"] == 3  # the trip's two and the family conversation's one
    assert client.get("/v1/entities", headers=h).json() == []
    assert counts["memories"] == 2
    assert client.get("/v1/conversations", headers=h).json() == []
    assert client.get("/v1/memories", params={"status": ["confirmed", "proposed", "superseded",
                      "rejected"]}, headers=h).json() == []  # fmt: skip
    assert client.get(f"/v1/conversations/{world.conversation}", headers=h).status_code == 404
    audit = client.get("/v1/audit", headers=h).json()
    assert audit[-1]["action"] == "user.deleted_all"
    assert audit[-1]["actor"].startswith("key:")
    assert "aisle" not in str(audit)
    assert client.get("/v1/me", headers=h).status_code == 200  # keys are not user data


def test_the_audit_names_the_key_that_acted(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    client.post("/v1/memories", json={"text": "I like tea"}, headers=auth(keys.acme_app, "alice"))
    app_key = next(k for k in memory.keys.list("acme") if k.role == "app")
    events = client.get("/v1/audit", headers=auth(keys.alice)).json()
    assert events[-1]["action"] == "memory.saved"
    assert events[-1]["actor"] == f"key:{app_key.id}"
