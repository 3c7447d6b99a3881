"""Long-term memory over HTTP: remember, propose, confirm, reject, update, delete, search."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth


def test_remember_list_get_update_and_delete(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    h = auth(keys.alice)
    saved = client.post("/v1/memories", json={"text": "I prefer aisle seats", "category":
                        "preference", "subject": "seat"}, headers=h)  # fmt: skip
    assert saved.status_code == 201, saved.text
    notice = saved.json()
    assert notice["status"] == "saved"
    first = notice["memory"]["id"]
    assert client.get(f"/v1/memories/{first}", headers=h).json()["text"] == "I prefer aisle seats"

    updated = client.patch(f"/v1/memories/{first}", json={"text": "I prefer window seats"},
                           headers=h).json()  # fmt: skip
    second = updated["memory"]["id"]
    assert second != first
    assert updated["memory"]["supersedes_id"] == first
    current = client.get("/v1/memories", headers=h).json()
    assert [m["text"] for m in current] == ["I prefer window seats"]
    history = client.get("/v1/memories", params={"status": ["superseded", "confirmed"]},
                         headers=h).json()  # fmt: skip
    assert {m["status"] for m in history} == {"superseded", "confirmed"}

    hits = client.get("/v1/memories/search", params={"q": "window"}, headers=h).json()
    assert [hit["memory"]["id"] for hit in hits] == [second]

    deleted = client.delete(f"/v1/memories/{second}", headers=h).json()["deleted_ids"]
    assert set(deleted) == {first, second}
    assert client.get(f"/v1/memories/{second}", headers=h).status_code == 404
    assert client.get("/v1/memories/search", params={"q": "window"}, headers=h).json() == []
    exported = client.get("/v1/export", headers=h).json()
    assert "window seats" not in str(exported)
    assert memory.scope("acme", "alice").memories.list(status=None) == []


def test_never_store_and_bad_memories_are_refused_and_write_nothing(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    h = auth(keys.alice)
    secret = client.post("/v1/memories", json={"text": "my password is hunter2-Secret!"},
                         headers=h)  # fmt: skip
    assert secret.status_code == 422
    assert secret.json()["code"] == "never_store"
    assert secret.json()["reason"]
    assert "hunter2" not in secret.text
    assert client.post("/v1/memories", json={"text": " "}, headers=h).status_code == 422
    assert client.post("/v1/memories", json={"text": "x" * 1001}, headers=h).status_code == 422
    wrong_scope = client.post("/v1/memories", json={"text": "I like tea", "scope": "team"},
                              headers=h)  # fmt: skip
    assert wrong_scope.status_code == 422
    assert memory.scope("acme", "alice").memories.list(status=None) == []


def test_proposals_are_confirmed_or_rejected_by_the_user(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    one = client.post("/v1/memories/proposals", json={"text": "Likes jazz"}, headers=h).json()
    two = client.post("/v1/memories/proposals", json={"text": "Works at night"}, headers=h).json()
    assert one["status"] == two["status"] == "proposed"
    confirmed = client.post(f"/v1/memories/{one['memory']['id']}/confirm", headers=h).json()
    assert confirmed["status"] == "confirmed"
    assert confirmed["source_kind"] == "confirmed_inference"
    rejected = client.post(f"/v1/memories/{two['memory']['id']}/reject", headers=h).json()
    assert rejected["status"] == "rejected"
    twice = client.post(f"/v1/memories/{two['memory']['id']}/reject", headers=h)
    assert twice.status_code == 422
    assert twice.json()["code"] == "invalid_input"
    not_conflicting = client.post(f"/v1/memories/{one['memory']['id']}/resolve", headers=h)
    assert not_conflicting.status_code == 422


def test_a_conflict_is_resolved_by_the_user(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    from convmem.domain.memories import save_memory

    alice = memory.scope("acme", "alice")
    alice.remember("I live in Porto", category="profile", subject="home city")
    with memory.store.write() as tx:  # an import that disagrees: flagged, not superseding
        save_memory(tx, alice.principal, "I live in Braga", source_kind="import",
                    status="confirmed", category="profile", subject="home city")  # fmt: skip
    h = auth(keys.alice)
    records = client.get("/v1/memories", headers=h).json()
    flagged = [m for m in records if m["conflicts_with_id"]]
    assert flagged
    keep = next(m for m in records if m["text"] == "I live in Porto")
    resolved = client.post(f"/v1/memories/{keep['id']}/resolve", headers=h).json()
    assert resolved["conflicts_with_id"] is None
    assert [m["text"] for m in client.get("/v1/memories", headers=h).json()] == ["I live in Porto"]


def test_a_message_asking_to_remember_reports_it(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    sent = client.post(f"/v1/conversations/{cid}/messages",
                       json={"role": "user", "content": "Remember that I am vegetarian."},
                       headers=h).json()  # fmt: skip
    assert [n["status"] for n in sent["notices"]] == ["saved"]
    memory_id = sent["notices"][0]["memory"]["id"]
    got = client.get(f"/v1/memories/{memory_id}", headers=h).json()
    assert got["source_message_id"] == sent["id"]


def test_a_supersession_is_reported_and_undone_over_http(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    messages = f"/v1/conversations/{cid}/messages"

    def say(content: str) -> list[dict[str, Any]]:
        sent = client.post(messages, json={"role": "user", "content": content}, headers=h)
        assert sent.status_code == 201, sent.text
        return list(sent.json()["notices"])

    aisle = say("Remember that I prefer aisle seats.")[0]["memory"]
    assert say("Remember when we talked about seats last week?") == []
    [notice] = say("Remember that I prefer window seats.")
    assert notice["status"] == "saved"
    assert notice["superseded"] == [{"id": aisle["id"], "text": "I prefer aisle seats."}]
    restored = client.post(f"/v1/memories/{aisle['id']}/restore", headers=h)
    assert restored.status_code == 200, restored.text
    assert restored.json()["status"] == "confirmed"
    texts = [m["text"] for m in client.get("/v1/memories", headers=h).json()]
    assert texts == ["I prefer aisle seats."]
    again = client.post(f"/v1/memories/{aisle['id']}/restore", headers=h)
    assert again.status_code == 422
    assert client.post("/v1/memories/mem_nope/restore", headers=h).status_code == 404


def test_a_conflict_and_a_forget_name_both_texts_over_http(client: TestClient, keys: Keys) -> None:
    """A habit that merely differs waits as a proposal naming the kept text; confirming it
    replaces that one; a forget names what it deleted (issue 36)."""
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    messages = f"/v1/conversations/{cid}/messages"

    def say(content: str) -> list[dict[str, Any]]:
        sent = client.post(messages, json={"role": "user", "content": content}, headers=h)
        assert sent.status_code == 201, sent.text
        return list(sent.json()["notices"])

    tea = say("Remember that I drink tea.")[0]["memory"]
    [conflict] = say("Remember that I drink coffee.")
    assert (conflict["status"], conflict["reason"]) == ("proposed", "conflict")
    assert conflict["records"] == [{"id": tea["id"], "text": "I drink tea."}]
    confirmed = client.post(f"/v1/memories/{conflict['memory']['id']}/confirm", headers=h)
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["supersedes_id"] == tea["id"]
    [forgotten] = say("Forget about the coffee.")
    assert forgotten["status"] == "forgotten"
    assert [r["text"] for r in forgotten["records"]] == ["I drink coffee."]
    assert client.get("/v1/memories", headers=h).json() == []


def test_what_a_change_replaces_is_asked_first_and_undone_whole_over_http(
    client: TestClient, keys: Keys
) -> None:
    h = auth(keys.alice)
    aisle = client.post("/v1/memories", json={"text": "I prefer aisle seats."}, headers=h).json()
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    sent = client.post(f"/v1/conversations/{cid}/messages",
                       json={"role": "user", "content": "I prefer window seats."},
                       headers=h).json()  # fmt: skip
    suggestion = sent["notices"][0]["memory"]
    assert suggestion["status"] == "proposed"

    asked = client.post(f"/v1/memories/{suggestion['id']}/replaces", headers=h)
    assert asked.status_code == 200, asked.text
    assert [m["text"] for m in asked.json()] == ["I prefer aisle seats."]
    edit = {"text": "I prefer window seats on short flights."}
    asked = client.post(f"/v1/memories/{suggestion['id']}/replaces", json=edit, headers=h)
    assert [m["id"] for m in asked.json()] == [aisle["memory"]["id"]]
    assert client.get("/v1/memories", headers=h).json()[0]["status"] == "confirmed"  # no write

    confirmed = client.post(f"/v1/memories/{suggestion['id']}/confirm", headers=h).json()
    assert confirmed["supersedes_id"] == aisle["memory"]["id"]
    undone = client.post(f"/v1/memories/{suggestion['id']}/undo", headers=h)
    assert undone.status_code == 200, undone.text
    assert undone.json()["memory"]["status"] == "proposed"
    assert [m["text"] for m in undone.json()["restored"]] == ["I prefer aisle seats."]
    statuses = {m["text"]: m["status"] for m in client.get("/v1/memories", headers=h).json()}
    assert statuses == {"I prefer aisle seats.": "confirmed", "I prefer window seats.": "proposed"}
    again = client.post(f"/v1/memories/{suggestion['id']}/undo", headers=h)
    assert again.status_code == 422  # a suggestion: no change to undo
    wrong = client.post(f"/v1/memories/{suggestion['id']}/replaces", json={"txt": "x"}, headers=h)
    assert wrong.status_code == 422
