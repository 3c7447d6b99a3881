"""The tool registry over HTTP: an application registers, lists and removes its tenant's tools;
assembly offers the ones a request needs and never a risky one it does not allow."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth

WEATHER = {
    "definition": {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather and the forecast for a location.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    },
    "use_when": ["user asks about rain, snow or temperature"],
}
REFUND = {
    "definition": {
        "name": "refund_order",
        "description": "Refund an order to the original payment method.",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
    "use_when": ["user wants their money back for an order"],
    "risk": "high",
}


def _register(client: TestClient, headers: dict[str, str], body: dict[str, Any]) -> Any:
    made = client.post("/v1/tools", json=body, headers=headers)
    assert made.status_code == 201, made.text
    return made.json()


def test_register_list_replace_and_delete(client: TestClient, keys: Keys) -> None:
    app = auth(keys.acme_app)
    out = _register(client, app, WEATHER)
    assert out["name"] == "get_weather" and out["risk"] == "low"
    assert out["use_when"] == WEATHER["use_when"]
    _register(client, auth(keys.acme_admin), REFUND)
    listed = client.get("/v1/tools", headers=app).json()
    assert [t["name"] for t in listed] == ["get_weather", "refund_order"]
    assert listed[1]["risk"] == "high"
    again = _register(client, app, {**WEATHER, "risk": "medium"})
    assert again["risk"] == "medium" and again["created_at"] == out["created_at"]
    assert client.get("/v1/tools", headers=auth(keys.globex_app)).json() == []
    # another tenant's tool is not found, and stays
    gone = client.delete("/v1/tools/get_weather", headers=auth(keys.globex_app))
    assert gone.status_code == 404 and gone.headers["content-type"] == "application/problem+json"
    assert client.delete("/v1/tools/get_weather", headers=app).status_code == 204
    assert [t["name"] for t in client.get("/v1/tools", headers=app).json()] == ["refund_order"]
    assert client.delete("/v1/tools/get_weather", headers=app).status_code == 404


def test_refused_registrations_write_nothing(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    app = auth(keys.acme_app)
    _register(client, app, WEATHER)
    before = memory.tools.list("acme")
    bad = [
        {"definition": {"name": "no spaces allowed"}},
        {**WEATHER, "risk": "extreme"},
        {**WEATHER, "use_when": "not a list"},
        {**WEATHER, "use_when": ["x" * 301]},
        {"use_when": []},
    ]
    for body in bad:
        refused = client.post("/v1/tools", json=body, headers=app)
        assert refused.status_code in (400, 422), refused.text
        assert refused.headers["content-type"] == "application/problem+json"
    assert memory.tools.list("acme") == before
    # a user's key may not touch the registry
    assert client.post("/v1/tools", json=REFUND, headers=auth(keys.alice)).status_code == 403
    assert memory.tools.list("acme") == before


def test_assemble_offers_registry_tools_and_gates_risky_ones(
    client: TestClient, keys: Keys
) -> None:
    _register(client, auth(keys.acme_app), WEATHER)
    _register(client, auth(keys.acme_app), REFUND)
    alice = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=alice).json()["id"]
    url = f"/v1/conversations/{cid}/assemble"

    weather = client.post(
        url, json={"user_message": "Will it rain in Porto tomorrow?", "offer_tools": True},
        headers=alice,
    )  # fmt: skip
    assert weather.status_code == 200, weather.text
    report = weather.json()["report"]
    assert report["tools_offered"] == ["get_weather"]
    assert weather.json()["tools"][0]["function"]["name"] == "get_weather"
    reasons = {s["name"]: s["reason"] for s in report["tools_suppressed"]}
    assert reasons["refund_order"].startswith("risky")

    refund = {"user_message": "I want my money back for order 5512", "offer_tools": True}
    denied = client.post(url, json=refund, headers=alice).json()["report"]
    assert "refund_order" not in denied["tools_offered"]
    allowed = client.post(url, json={**refund, "allow_risky": ["refund_order"]}, headers=alice)
    assert "refund_order" in allowed.json()["report"]["tools_offered"]

    capped = client.post(
        url, json={**refund, "allow_risky": True, "options": {"tools_k": 0}}, headers=alice
    ).json()["report"]
    assert capped["tools_offered"] == []
    bad = client.post(url, json={**refund, "allow_risky": "refund_order"}, headers=alice)
    assert bad.status_code in (400, 422)
    # without offer_tools the registry is not read
    plain = client.post(url, json={"user_message": "Rain in Porto?"}, headers=alice).json()
    assert plain["report"]["tools_offered"] == [] and plain["tools"] is None
