"""``Idempotency-Key`` on the routes that create messages and memories, over real HTTP (the
service's TestClient on a real SQLite file)."""

from __future__ import annotations

from fastapi.testclient import TestClient

import convmem
from tests.service.conftest import Keys, auth


def _keyed(token: str, key: str) -> dict[str, str]:
    return {**auth(token), "Idempotency-Key": key}


def test_a_retried_post_returns_the_first_response_and_stores_once(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    conv = client.post("/v1/conversations", json={}, headers=auth(keys.alice)).json()["id"]
    url = f"/v1/conversations/{conv}/messages"
    body = {"role": "user", "content": "Remember that I prefer aisle seats."}
    first = client.post(url, json=body, headers=_keyed(keys.alice, "m-1"))
    again = client.post(url, json=body, headers=_keyed(keys.alice, "m-1"))
    assert first.status_code == again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["notices"] == first.json()["notices"]
    assert len(client.get(url, headers=auth(keys.alice)).json()) == 1
    other = client.post(url, json={**body, "content": "hi"}, headers=_keyed(keys.alice, "m-1"))
    assert other.status_code == 409 and other.json()["code"] == "idempotency_conflict"
    assert "aisle" not in other.text  # the problem names no content
    assert len(client.get(url, headers=auth(keys.alice)).json()) == 1

    memory_body = {"text": "Prefers Python examples"}
    saved = client.post("/v1/memories", json=memory_body, headers=_keyed(keys.alice, "r-1"))
    resaved = client.post("/v1/memories", json=memory_body, headers=_keyed(keys.alice, "r-1"))
    assert saved.status_code == resaved.status_code == 201
    assert saved.json()["memory"]["id"] == resaved.json()["memory"]["id"]
    listed = client.get("/v1/memories", headers=auth(keys.alice)).json()
    assert len(listed) == 2  # the aisle seats (said in the chat) and this one, once
    changed = client.post("/v1/memories", json={"text": "Prefers Go"},
                          headers=_keyed(keys.alice, "r-1"))  # fmt: skip
    assert changed.status_code == 409
    # bob's "r-1" is his own key: no conflict with alice's, and nothing of hers comes back
    bobs = client.post("/v1/memories", json=memory_body, headers=_keyed(keys.bob, "r-1"))
    assert bobs.status_code == 201 and bobs.json()["memory"]["id"] != saved.json()["memory"]["id"]


def test_a_malformed_key_is_a_422_and_writes_nothing(client: TestClient, keys: Keys) -> None:
    conv = client.post("/v1/conversations", json={}, headers=auth(keys.alice)).json()["id"]
    url = f"/v1/conversations/{conv}/messages"
    refused = client.post(url, json={"role": "user", "content": "hello"},
                          headers=_keyed(keys.alice, "x" * 300))  # fmt: skip
    assert refused.status_code == 422
    assert client.get(url, headers=auth(keys.alice)).json() == []


def test_a_search_says_how_many_rows_it_ranked_by_words_only(
    client: TestClient, keys: Keys
) -> None:
    conv = client.post("/v1/conversations", json={}, headers=auth(keys.alice)).json()["id"]
    client.post(f"/v1/conversations/{conv}/messages", json={"role": "user", "content": "kiln"},
                headers=auth(keys.alice))  # fmt: skip
    found = client.get(f"/v1/conversations/{conv}/search", params={"q": "kiln"},
                       headers=auth(keys.alice))  # fmt: skip
    assert found.status_code == 200 and len(found.json()) == 1
    assert found.headers["X-Convmem-Unembedded"] == "0"  # no embedder: words are the ranking
