"""The HTTP service over every backend: hostile values are 4xx problem+json (never a 500 on one
backend and a 201 on the other), and another principal's ids are 404 on every route."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.service import create_app
from convmem.testing.harness import Backend


@pytest.fixture
def client(memory: convmem.Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory), raise_server_exceptions=False) as test_client:
        yield test_client


def _bearer(memory: convmem.Memory, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {memory.keys.create('acme', 'user', user=user).token}"}


def _problem(response: object, status: int) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == "application/problem+json"  # type: ignore[attr-defined]


BODIES = {
    "created_at that overflows UTC": (
        '{"role":"user","content":"hi","created_at":"0001-01-01T00:00:00+14:00"}'
    ),
    "NUL tool_call_id": '{"role":"tool","content":"x","tool_call_id":"a\\u0000"}',
    "NUL in tool call arguments": (
        '{"role":"assistant","content":"","tool_calls":'
        '[{"id":"c1","name":"f","arguments":"{\\"a\\":\\"\\\\u0000\\"}"}]}'
    ),
    "NUL content": '{"role":"user","content":"a\\u0000b"}',
    "lone surrogate in metadata": '{"role":"user","content":"hi","metadata":{"k":"\\ud800"}}',
}


@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_hostile_message_bodies_are_422_on_every_backend(
    memory: convmem.Memory, backend: Backend, client: TestClient, body: str
) -> None:
    alice = _bearer(memory, "alice")
    conv = client.post("/v1/conversations", json={"title": "t"}, headers=alice).json()["id"]
    before = backend.fingerprint()
    response = client.post(
        f"/v1/conversations/{conv}/messages",
        content=BODIES[body].encode(),
        headers={**alice, "content-type": "application/json"},
    )
    _problem(response, 422)
    assert backend.fingerprint() == before


def test_a_key_name_with_nul_is_422_on_every_backend(
    memory: convmem.Memory, backend: Backend, client: TestClient
) -> None:
    admin = {"Authorization": f"Bearer {memory.keys.create('acme', 'admin').token}"}
    before = backend.fingerprint()
    response = client.post(
        "/v1/keys",
        content=b'{"role":"user","user":"zed","name":"a\\u0000"}',
        headers={**admin, "content-type": "application/json"},
    )
    _problem(response, 422)
    assert backend.fingerprint() == before


@pytest.mark.parametrize("named", ["a\x01b", "\u202eecila", "alice\t"], ids=repr)
def test_an_acting_user_with_control_characters_is_refused(
    memory: convmem.Memory, client: TestClient, named: str
) -> None:
    app_key = memory.keys.create("acme", "app").token
    response = client.get(
        "/v1/conversations",
        headers=[
            (b"Authorization", f"Bearer {app_key}".encode()),
            (b"X-Convmem-User", named.encode()),
        ],
    )
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"] == "application/problem+json"


def test_another_users_ids_are_404_on_every_route(
    memory: convmem.Memory, client: TestClient
) -> None:
    alice, bob = _bearer(memory, "alice"), _bearer(memory, "bob")
    conv = client.post("/v1/conversations", json={"title": "t"}, headers=alice).json()["id"]
    said = client.post(
        f"/v1/conversations/{conv}/messages",
        json={"role": "user", "content": "Remember that I like green tea."},
        headers=alice,
    ).json()
    message, memory_id = said["id"], said["notices"][0]["memory"]["id"]
    pin = client.post("/v1/pins", json={"text": "Be brief."}, headers=alice).json()["id"]
    base = f"/v1/conversations/{conv}"
    routes: list[tuple[str, str, object]] = [
        ("GET", base, None),
        ("GET", f"{base}/messages", None),
        ("GET", f"{base}/branch", None),
        ("POST", f"{base}/messages", {"role": "user", "content": "x"}),
        ("GET", f"{base}/messages/{message}", None),
        ("GET", f"{base}/messages/{message}/siblings", None),
        ("PUT", f"{base}/active-leaf", {"leaf_id": message}),
        ("POST", f"{base}/assemble", {"user_message": "hi"}),
        ("GET", f"{base}/last-assembly", None),
        ("GET", f"{base}/pins", None),
        ("POST", f"{base}/pins", {"text": "x"}),
        ("GET", f"{base}/search?q=tea", None),
        ("GET", f"{base}/summaries", None),
        ("GET", f"/v1/messages/{message}", None),
        ("GET", f"/v1/memories/{memory_id}", None),
        ("PATCH", f"/v1/memories/{memory_id}", {"text": "I like coffee."}),
        ("POST", f"/v1/memories/{memory_id}/confirm", None),
        ("POST", f"/v1/memories/{memory_id}/reject", None),
        ("POST", f"/v1/memories/{memory_id}/restore", None),
        ("POST", f"/v1/memories/{memory_id}/replaces", {"text": "I like coffee."}),
        ("POST", f"/v1/memories/{memory_id}/undo", None),
        ("POST", f"/v1/memories/{memory_id}/resolve", None),
        ("DELETE", f"/v1/pins/{pin}", None),
        ("DELETE", f"/v1/memories/{memory_id}", None),
        ("DELETE", f"{base}/messages/{message}", None),
        ("DELETE", base, None),
    ]
    for method, url, body in routes:
        response = client.request(method, url, headers=bob, json=body)
        assert response.status_code == 404, (method, url, response.status_code)
        assert "green tea" not in response.text
    assert client.get(f"/v1/memories/{memory_id}", headers=alice).status_code == 200
    assert client.get(f"{base}/messages/{message}", headers=alice).status_code == 200
