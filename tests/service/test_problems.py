"""Bad input answers 4xx as application/problem+json with a stable code, and writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.service import ServiceSettings, create_app

from .conftest import Keys, auth
from .world import World, build_world


@pytest.fixture
def world(memory: convmem.Memory) -> World:
    return build_world(memory)


def _snapshot(memory: convmem.Memory) -> Any:
    data = memory.scope("acme", "alice").export()["data"]
    data.pop("audit_events")
    return data


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"] == f"urn:convmem:problem:{code}"
    assert body["title"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body


def test_malformed_json_is_400(
    client: TestClient, keys: Keys, world: World, memory: convmem.Memory
) -> None:
    before = _snapshot(memory)
    url = f"/v1/conversations/{world.conversation}/messages"
    headers = {**auth(keys.alice), "Content-Type": "application/json"}
    for body in (b"{", b'{"role": "user", "content": }', b"\xff\xfe", b"[" * 50_000):
        _problem(client.post(url, content=body, headers=headers), 400, "malformed_json")
    assert _snapshot(memory) == before


def test_wrong_types_and_unknown_fields_are_422_without_echoing_input(
    client: TestClient, keys: Keys, world: World, memory: convmem.Memory
) -> None:
    before = _snapshot(memory)
    url = f"/v1/conversations/{world.conversation}/messages"
    h = auth(keys.alice)
    cases: list[Any] = [
        {"role": "user", "content": 5},
        {"role": "wizard", "content": "SECRET-INPUT"},
        {"role": "user", "content": "SECRET-INPUT", "unknown": 1},
        {"role": "user", "content": "SECRET-INPUT", "created_at": 1000},
        {"role": "user", "content": "SECRET-INPUT", "metadata": ["not", "a", "map"]},
        ["a", "list"],
        "a string",
        None,
    ]
    for body in cases:
        problem = _problem(client.post(url, json=body, headers=h), 422, "invalid_request")
        assert problem["errors"]
        assert "SECRET-INPUT" not in str(problem)
    surrogate = b'{"role": "user", "content": "\\ud800 SECRET-INPUT"}'  # a valid JSON escape
    response = client.post(
        url, content=surrogate, headers={**h, "Content-Type": "application/json"}
    )
    assert "SECRET-INPUT" not in str(_problem(response, 422, "invalid_request"))
    no_body = client.post(url, headers=h)
    _problem(no_body, 422, "invalid_request")
    bad_query = client.get("/v1/conversations", params={"limit": "many"}, headers=h)
    _problem(bad_query, 422, "invalid_request")
    huge_limit = client.get("/v1/conversations", params={"limit": 10**30}, headers=h)
    _problem(huge_limit, 422, "invalid_request")
    typo = client.get("/v1/memories", params={"statuses": "confirmed"}, headers=h)
    assert "statuses" not in _problem(typo, 422, "unknown_parameter")["detail"]
    assert _snapshot(memory) == before


def test_tree_rules_are_422(client: TestClient, keys: Keys, world: World) -> None:
    url = f"/v1/conversations/{world.conversation}/messages"
    h = auth(keys.alice)
    orphan = {"role": "tool", "content": "result", "tool_call_id": "nope"}
    _problem(client.post(url, json=orphan, headers=h), 422, "invalid_message")
    _problem(client.post(url, json={"role": "user", "content": "  "}, headers=h), 422,
             "invalid_message")  # fmt: skip
    calls = {"role": "user", "content": "x", "tool_calls": [{"id": "c", "name": "n"}]}
    _problem(client.post(url, json=calls, headers=h), 422, "invalid_message")
    bad_args = {"role": "assistant", "tool_calls": [{"id": "c", "name": "n", "arguments": "[]"}]}
    _problem(client.post(url, json=bad_args, headers=h), 422, "invalid_message")
    nan = b'{"role": "user", "content": "x", "metadata": {"v": NaN}}'
    response = client.post(url, content=nan, headers={**h, "Content-Type": "application/json"})
    assert response.status_code in (400, 422)
    tool_edit = f"/v1/conversations/{world.conversation}/messages/{world.first}/regenerate"
    _problem(client.post(tool_edit, json={"content": "x"}, headers=h), 422, "invalid_message")


def test_unknown_ids_and_routes_are_404(client: TestClient, keys: Keys, world: World) -> None:
    h = auth(keys.alice)
    problem = _problem(client.get("/v1/conversations/conv_nope", headers=h), 404, "not_found")
    assert problem["kind"] == "conversation"
    leaf = {"leaf_id": "msg_nope"}
    _problem(client.put(f"/v1/conversations/{world.conversation}/active-leaf", json=leaf,
                        headers=h), 404, "not_found")  # fmt: skip
    parent = {"role": "user", "content": "x", "parent_id": "msg_nope"}
    _problem(client.post(f"/v1/conversations/{world.conversation}/messages", json=parent,
                         headers=h), 404, "not_found")  # fmt: skip
    source = {"text": "I like tea", "source_message_id": "msg_nope"}
    _problem(client.post("/v1/memories", json=source, headers=h), 404, "not_found")
    _problem(client.get("/v1/nowhere", headers=h), 404, "not_found")
    _problem(client.put("/v1/memories", headers=h), 405, "method_not_allowed")
    bad_id = client.get("/v1/conversations/bad%0Aid", headers=h)
    assert bad_id.status_code in (404, 422)


def test_oversized_bodies_are_413_before_anything_is_read(
    memory: convmem.Memory, keys: Keys, world: World
) -> None:
    app = create_app(memory, ServiceSettings(max_body_bytes=10_000))
    h = auth(keys.alice)
    url = f"/v1/conversations/{world.conversation}/messages"
    before = _snapshot(memory)
    with TestClient(app) as client:
        declared = client.post(url, json={"role": "user", "content": "x" * 20_000}, headers=h)
        _problem(declared, 413, "content_too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what arrives
            yield b'{"role": "user", "content": "'
            for _ in range(30):
                yield b"x" * 1000
            yield b'"}'

        streamed = client.post(url, content=chunks(), headers={**h, "Content-Type":
                               "application/json"})  # fmt: skip
        _problem(streamed, 413, "content_too_large")
        fits = client.post(url, json={"role": "user", "content": "x" * 5000}, headers=h)
        assert fits.status_code == 201
    with TestClient(create_app(memory)) as client:  # the engine's own content limit
        big = client.post(url, json={"role": "user", "content": "y" * 1_000_001}, headers=h)
        problem = _problem(big, 413, "content_too_large")
        assert problem["limit"] == 1_000_000
    after = _snapshot(memory)
    assert len(after["messages"]) == len(before["messages"]) + 1


def test_a_fault_of_convmem_is_a_500_problem_without_details(
    memory: convmem.Memory, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("internal detail with CONTENT")

    monkeypatch.setattr(convmem.Scope, "conversations", broken)
    with TestClient(create_app(memory), raise_server_exceptions=False) as client:
        response = client.get("/v1/conversations", headers=auth(keys.alice))
    problem = _problem(response, 500, "internal_error")
    assert "CONTENT" not in response.text
    assert problem["detail"]


def test_a_busy_database_is_503_with_retry_after(
    memory: convmem.Memory, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(*args: object, **kwargs: object) -> None:
        raise convmem.StoreBusy("the database stayed locked past every retry")

    monkeypatch.setattr(convmem.Scope, "create_conversation", busy)
    with TestClient(create_app(memory)) as client:
        response = client.post("/v1/conversations", json={}, headers=auth(keys.alice))
    _problem(response, 503, "store_busy")
    assert response.headers["retry-after"] == "1"


def test_405_lists_every_method_the_path_answers(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    for method in ("OPTIONS", "PATCH", "DELETE"):
        response = client.request(method, "/v1/conversations", headers=h)
        _problem(response, 405, "method_not_allowed")
        allow = {m.strip() for m in response.headers["allow"].split(",")}
        assert {"GET", "POST"} <= allow
        assert method not in allow
    # every advertised method really is answered (not 405)
    for method in sorted(allow - {"HEAD"}):
        kwargs: dict[str, Any] = {"json": {}} if method == "POST" else {}
        answered = client.request(method, "/v1/conversations", headers=h, **kwargs)
        assert answered.status_code != 405
    response = client.put("/v1/memories", headers=h)
    _problem(response, 405, "method_not_allowed")
    assert {"GET", "POST"} <= {m.strip() for m in response.headers["allow"].split(",")}
