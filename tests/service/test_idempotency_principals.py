"""An ``Idempotency-Key`` never crosses principals (session 41's adversarial pass, over real HTTP
on a real SQLite file): a key alice used, sent by anyone else — bob, the app acting as bob,
another tenant's user, another tenant's app acting as a user named "alice" — with alice's exact
call replays nothing of hers: her conversation is 404 exactly as a missing one, and a write of
their own under the same key is theirs, with its own ids and none of her content. All held when
probed; they stay as regression tests."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.service.conftest import Keys, auth

SAID = "Remember that I prefer aisle seats."


def _outsiders(keys: Keys) -> dict[str, dict[str, str]]:
    return {
        "bob": auth(keys.bob),
        "app as bob": auth(keys.acme_app, user="bob"),
        "carol (globex)": auth(keys.carol),
        "globex app as 'alice'": auth(keys.globex_app, user="alice"),
    }


@pytest.mark.parametrize("who", ["bob", "app as bob", "carol (globex)", "globex app as 'alice'"])
def test_alices_key_replays_nothing_to_anyone_else(
    client: TestClient, keys: Keys, who: str
) -> None:
    mine = auth(keys.alice)
    conv = client.post("/v1/conversations", json={}, headers=mine).json()["id"]
    url = f"/v1/conversations/{conv}/messages"
    body = {"role": "user", "content": SAID}
    first = client.post(url, json=body, headers={**mine, "Idempotency-Key": "k-1"})
    assert first.status_code == 201
    saved = client.post("/v1/memories", json={"text": "Prefers window seats"},
                        headers={**mine, "Idempotency-Key": "r-1"})  # fmt: skip
    assert saved.status_code == 201

    theirs = _outsiders(keys)[who]
    # alice's call, alice's key, someone else's credentials: her conversation does not exist
    replay = client.post(url, json=body, headers={**theirs, "Idempotency-Key": "k-1"})
    missing = client.post(url.replace(conv, conv[:-4] + "ZZZZ"), json=body,
                          headers={**theirs, "Idempotency-Key": "k-1"})  # fmt: skip
    assert replay.status_code == missing.status_code == 404
    assert first.json()["id"] not in replay.text and "aisle" not in replay.text
    # the same key for a memory of their own is theirs: a new memory, nothing of alice's
    own = client.post("/v1/memories", json={"text": "Prefers window seats"},
                      headers={**theirs, "Idempotency-Key": "r-1"})  # fmt: skip
    assert own.status_code == 201
    assert own.json()["memory"]["id"] != saved.json()["memory"]["id"]
    again = client.post("/v1/memories", json={"text": "Prefers window seats"},
                        headers={**theirs, "Idempotency-Key": "r-1"})  # fmt: skip
    assert again.json()["memory"]["id"] == own.json()["memory"]["id"]
    # alice's own retry still gets her first answer
    retried = client.post("/v1/memories", json={"text": "Prefers window seats"},
                          headers={**mine, "Idempotency-Key": "r-1"})  # fmt: skip
    assert retried.json()["memory"]["id"] == saved.json()["memory"]["id"]
    assert [m["text"] for m in client.get("/v1/memories", headers=theirs).json()] == [
        "Prefers window seats"
    ]
