"""Memory purposes over HTTP: a key's purposes and a route's cap what its requests recall and
search; a request may narrow them (``purposes`` in the assemble body, ``purpose`` on search) but
never widen them (403 ``purpose_not_allowed``); a memory is written with its purpose."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from fastapi.testclient import TestClient

import convmem
from convmem.cli.main import main
from convmem.service import ServiceSettings, create_app
from tests.service.conftest import Keys, auth

ASSEMBLE = "/v1/conversations/{conversation_id}/assemble"


def _memories(memory: convmem.Memory) -> tuple[str, str]:
    alice = memory.scope("acme", "alice")
    personal = alice.remember("I prefer aisle seats on long flights.").memory
    task = alice.remember("Book my flights with the Acme corporate card.",
                          purpose="task_automation").memory  # fmt: skip
    assert personal is not None and task is not None
    return personal.id, task.id


def _assemble(client: TestClient, headers: dict[str, str], **body: Any) -> Any:
    conv = client.post("/v1/conversations", json={}, headers=headers).json()["id"]
    return client.post(
        f"/v1/conversations/{conv}/assemble",
        json={"user_message": "Please book my flight to Oslo.", **body}, headers=headers,
    )  # fmt: skip


def test_a_keys_purposes_cap_recall_and_a_request_may_narrow_not_widen(
    memory: convmem.Memory, client: TestClient, keys: Keys
) -> None:
    personal, task = _memories(memory)
    every = auth(keys.acme_app, user="alice")
    assert set(_assemble(client, every).json()["report"]["memory_ids"]) == {personal, task}
    only_tasks = _assemble(client, every, purposes=["task_automation"]).json()
    assert only_tasks["report"]["memory_ids"] == [task]
    assert "aisle" not in str(only_tasks["messages"])

    capped = memory.keys.create("acme", "app", purposes=["personalization"]).token
    headers = auth(capped, user="alice")
    assert _assemble(client, headers).json()["report"]["memory_ids"] == [personal]
    refused = _assemble(client, headers, purposes=["task_automation"])
    assert refused.status_code == 403
    assert refused.json()["code"] == "purpose_not_allowed"
    assert refused.json()["purposes"] == ["task_automation"]
    found = client.get("/v1/memories/search", params={"q": "flights card seats", "k": 10},
                       headers=headers).json()  # fmt: skip
    assert [hit["memory"]["id"] for hit in found] == [personal]
    widened = client.get("/v1/memories/search", headers=headers,
                         params={"q": "card", "purpose": ["task_automation"]})  # fmt: skip
    assert widened.status_code == 403
    # the memory page still lists every memory: purposes govern use, not the user's own view
    listed = client.get("/v1/memories", headers=headers).json()
    assert {m["id"] for m in listed} == {personal, task}


def test_a_route_caps_purposes_whatever_the_key_allows(memory: convmem.Memory, keys: Keys) -> None:
    personal, task = _memories(memory)
    settings = ServiceSettings(route_purposes={ASSEMBLE: ["personalization"]})
    with TestClient(create_app(memory, settings)) as client:
        headers = auth(keys.acme_app, user="alice")
        assert _assemble(client, headers).json()["report"]["memory_ids"] == [personal]
        assert _assemble(client, headers, purposes=["task_automation"]).status_code == 403
        # another route is capped by the key alone
        params = {"q": "card", "purpose": "task_automation"}
        found = client.get("/v1/memories/search", params=params, headers=headers).json()
        assert [hit["memory"]["id"] for hit in found] == [task]
        # a key and a route together: what both allow
        tasks_key = memory.keys.create("acme", "app", purposes=["task_automation"]).token
        assert _assemble(client, auth(tasks_key, user="alice")).json()["report"]["memory_ids"] == []


def test_memories_are_written_with_a_purpose_and_keys_issued_with_purposes(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    headers = auth(keys.alice)
    made = client.post(
        "/v1/memories",
        headers=headers,
        json={"text": "Send my invoices to billing@example.org.", "purpose": "task_automation"},
    )
    assert made.status_code == 201, made.text
    assert made.json()["memory"]["purpose"] == "task_automation"
    default = client.post("/v1/memories", headers=headers, json={"text": "I like green tea."})
    assert default.json()["memory"]["purpose"] == "personalization"
    for bad in ({"text": "I like tea.", "purpose": "advertising"},
                {"text": "Tabs, not spaces.", "purpose": "project_only"}):  # fmt: skip
        assert client.post("/v1/memories", headers=headers, json=bad).status_code == 422
    assert len(memory.scope("acme", "alice").memories.list()) == 2

    admin = auth(keys.acme_admin)
    issued = client.post("/v1/keys", headers=admin,
                         json={"role": "app", "purposes": ["personalization"]})  # fmt: skip
    assert issued.status_code == 201, issued.text
    assert issued.json()["key"]["purposes"] == ["personalization"]
    assert (
        client.post(
            "/v1/keys", headers=admin, json={"role": "admin", "purposes": ["personalization"]}
        ).status_code
        == 422
    )
    assert memory.keys.authenticate(issued.json()["token"]).purposes == ("personalization",)  # type: ignore[union-attr]


def test_the_cli_issues_a_key_with_purposes(memory: convmem.Memory, db_path: Any) -> None:
    ran = CliRunner().invoke(main, ["keys", "create", "--db", str(db_path), "--tenant", "acme",
                                    "--role", "app", "--purpose", "task_automation"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    key = memory.keys.authenticate(ran.output.strip().splitlines()[-1])
    assert key is not None and key.purposes == ("task_automation",)
