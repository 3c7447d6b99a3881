"""Authentication and authorisation: every route under every role, and 404-not-403.

The principal comes from the key alone. A missing, wrong or revoked key is 401; a role that may
not use a route is 403; another tenant's or user's ids are 404 exactly like ids that do not exist.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Route

import convmem
from convmem.service import create_app

from .conftest import Keys, auth
from .routes import OPTIONAL, ROUTES, concrete, request_kwargs
from .world import build_world


@functools.cache
def _served() -> frozenset[tuple[str, str]]:
    with convmem.open(":memory:") as memory:
        return frozenset(_app_routes(create_app(memory)))


def _app_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the app serves: the schema's, and the top-level routes kept out of it
    (the page, the docs). The /assets mount serves the page's static files."""
    found = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }
    for route in app.routes:
        if isinstance(route, APIRoute | Route):
            found |= {(method, route.path) for method in route.methods or () if method != "HEAD"}
    return found


def test_the_route_table_covers_every_route_of_the_app(app: FastAPI) -> None:
    served = _app_routes(app)
    assert served - set(ROUTES) == set(), "a route without an entry in tests/service/routes.py"
    assert set(ROUTES) - served <= OPTIONAL


def _user_data(memory: convmem.Memory) -> Any:
    data = memory.scope("acme", "alice").export()["data"]
    data.pop("audit_events")
    return data


@pytest.mark.parametrize("route", sorted(ROUTES), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_route_under_every_role(
    route: tuple[str, str],
    app: FastAPI,
    client: TestClient,
    keys: Keys,
    memory: convmem.Memory,
) -> None:
    if route not in _served():
        pytest.skip("the engine does not have this feature in this build")
    world = build_world(memory)
    method, _ = route
    key_id = memory.keys.list("acme")[-1].id
    path = concrete(route, world, key_id)
    kwargs = request_kwargs(route, world)
    kind = ROUTES[route]

    def call(headers: dict[str, str]) -> int:
        response = client.request(method, path, headers=headers, **kwargs)
        assert response.status_code < 500, response.text
        if response.status_code >= 400:
            assert response.headers["content-type"] == "application/problem+json"
        return response.status_code

    revoked = memory.keys.create("acme", "user", user="alice")
    memory.keys.revoke("acme", revoked.key.id)
    if kind == "public":
        assert call({}) == 200
        return
    if kind == "page":  # no key; a bogus link is refused, signing out without a session is fine
        assert call({}) in (204, 401)
        assert call(auth(keys.alice)) in (204, 401)
        return

    before = _user_data(memory)
    tools_before = memory.tools.list("acme")
    # refused first: none of these may change anything
    assert call({}) == 401
    assert call(auth("cmk_not-a-key")) == 401
    assert call(auth(keys.alice[:-2] + "xx")) == 401
    assert call(auth(revoked.token)) == 401
    if kind == "user":
        assert call(auth(keys.acme_admin)) == 403
        assert call(auth(keys.acme_app)) == 400  # must name the user
        assert call(auth(keys.alice, user="bob")) == 403
    elif kind == "admin":
        assert call(auth(keys.alice)) == 403
        assert call(auth(keys.acme_app, user="alice")) == 403
    elif kind == "app":
        assert call(auth(keys.alice)) == 403
        assert call(auth(keys.alice, user="alice")) == 403
    elif kind == "app-user":
        assert call(auth(keys.alice)) == 403
        assert call(auth(keys.acme_admin)) == 403
        assert call(auth(keys.acme_app)) == 400  # must name the user
    assert _user_data(memory) == before
    assert memory.tools.list("acme") == tools_before

    allowed = {
        "user": [auth(keys.alice), auth(keys.acme_app, user="alice"), auth(keys.alice, "alice")],
        "admin": [auth(keys.acme_admin)],
        "app": [auth(keys.acme_app), auth(keys.acme_admin)],
        "any": [auth(keys.alice), auth(keys.acme_app, user="alice"), auth(keys.acme_admin)],
        "app-user": [auth(keys.acme_app, user="alice")],
    }[kind]
    for headers in allowed:
        assert call(headers) not in (400, 401, 403)


# Routes that name one of alice's objects: under anyone else's key they must be 404, exactly as
# an id that does not exist.
ID_ROUTES = sorted(r for r, kind in ROUTES.items() if kind == "user" and "{" in r[1])


@pytest.mark.parametrize("route", ID_ROUTES, ids=lambda r: f"{r[0]} {r[1]}")
def test_other_principals_ids_are_404_exactly_like_missing_ids(
    route: tuple[str, str],
    app: FastAPI,
    client: TestClient,
    keys: Keys,
    memory: convmem.Memory,
) -> None:
    if route not in _served():
        pytest.skip("the engine does not have this feature in this build")
    world = build_world(memory)
    method = route[0]
    kwargs = request_kwargs(route, world)
    real = concrete(route, world)
    outsiders = {
        "bob (same tenant)": auth(keys.bob),
        "app acting as bob": auth(keys.acme_app, user="bob"),
        "carol (other tenant)": auth(keys.carol),
        "other tenant's app acting as 'alice'": auth(keys.globex_app, user="alice"),
    }
    before = _user_data(memory)
    for who, headers in outsiders.items():
        theirs = client.request(method, real, headers=headers, **kwargs)
        missing_path = real
        for value in (world.conversation, world.reply, world.memory, world.proposal):
            missing_path = missing_path.replace(value, value[:-4] + "ZZZZ")
        missing_path = missing_path.replace(world.user_pin, world.user_pin[:-4] + "ZZZZ")
        missing = client.request(method, missing_path, headers=headers, **kwargs)
        assert theirs.status_code == 404, (who, theirs.text)
        assert missing.status_code == 404, (who, missing.text)
        a, b = theirs.json(), missing.json()
        for body in (a, b):
            body.pop("request_id")
            body["detail"] = body["detail"].replace("ZZZZ", "")
        for value in (world.conversation, world.reply, world.memory, world.proposal):
            a["detail"] = a["detail"].replace(value, value[:-4])
            b["detail"] = b["detail"].replace(value, value[:-4])
        a["detail"] = a["detail"].replace(world.user_pin, world.user_pin[:-4])
        b["detail"] = b["detail"].replace(world.user_pin, world.user_pin[:-4])
        assert a == b, who
    assert _user_data(memory) == before


def test_a_user_key_acts_only_for_its_user(client: TestClient, keys: Keys) -> None:
    mine = client.get("/v1/me", headers=auth(keys.alice))
    assert mine.json()["user"] == "alice"
    refused = client.get("/v1/memories", headers=auth(keys.alice, user="bob"))
    assert refused.status_code == 403
    assert refused.json()["code"] == "user_mismatch"


def test_the_principal_never_comes_from_the_body(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    smuggled = client.post(
        "/v1/conversations", json={"title": "x", "user": "bob"}, headers=auth(keys.alice)
    )
    assert smuggled.status_code == 422
    created = client.post("/v1/memories", json={"text": "I like tea"}, headers=auth(keys.alice))
    assert created.status_code == 201
    assert [m.text for m in memory.scope("acme", "alice").memories.list()] == ["I like tea"]
    assert memory.scope("acme", "bob").memories.list() == []


def test_an_app_key_acts_for_any_user_of_its_tenant_only(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    for user in ("alice", "bob", "someone-new"):
        made = client.post("/v1/conversations", json={}, headers=auth(keys.acme_app, user=user))
        assert made.status_code == 201
        assert memory.scope("acme", user).conversation(made.json()["id"])
    bad = client.get("/v1/conversations", headers=auth(keys.acme_app, user=""))
    assert bad.status_code == 400
    assert memory.scope("globex", "alice").conversations() == []


def test_unauthorized_answers_name_the_scheme(client: TestClient) -> None:
    response = client.get("/v1/memories")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["code"] == "unauthorized"
    wrong_scheme = client.get("/v1/memories", headers={"Authorization": "Basic YTpi"})
    assert wrong_scheme.status_code == 401


def test_admin_manages_its_tenants_keys_only(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    admin = auth(keys.acme_admin)
    body = {"role": "user", "user": "dave", "name": "dave's page"}
    made = client.post("/v1/keys", json=body, headers=admin)
    assert made.status_code == 201
    token = made.json()["token"]
    assert client.get("/v1/me", headers=auth(token)).json()["user"] == "dave"
    listed = client.get("/v1/keys", headers=admin).json()
    assert made.json()["key"]["id"] in {k["id"] for k in listed}
    assert all("token" not in k and "secret" not in str(k) for k in listed)
    assert token not in str(listed)
    assert {k["tenant_id"] for k in listed} == {"acme"}
    # another tenant's admin: the key does not exist for it
    other = client.delete(f"/v1/keys/{made.json()['key']['id']}", headers=auth(keys.globex_admin))
    assert other.status_code == 404
    assert client.get("/v1/me", headers=auth(token)).status_code == 200
    revoked = client.delete(f"/v1/keys/{made.json()['key']['id']}", headers=admin)
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert client.get("/v1/me", headers=auth(token)).status_code == 401
    bad = client.post("/v1/keys", json={"role": "user"}, headers=admin)
    assert bad.status_code == 422
    assert bad.json()["code"] == "invalid_input"


def test_admin_switches_memory_off_for_the_tenant(client: TestClient, keys: Keys) -> None:
    off = client.put("/v1/tenant/policy", json={"memory_disabled": True},
                     headers=auth(keys.acme_admin))  # fmt: skip
    assert off.status_code == 200
    kept = dict.fromkeys(convmem.RETENTION_LAYERS)
    assert off.json() == {"tenant": "acme", "memory_disabled": True, "retention_days": None,
                          "retention": kept, "recall_unconfirmed_entity_facts": False,
                          "sensitive_categories": [], "sensitive_purposes": ["personalization"],
                          "max_pending_proposals": None}  # fmt: skip
    refused = client.post("/v1/memories", json={"text": "I like tea"}, headers=auth(keys.alice))
    assert refused.status_code == 422
    assert refused.json()["reason"] == "memory_disabled_for_tenant"
    assert client.get("/v1/settings", headers=auth(keys.alice)).json()["memory_enabled"] is False
    other = client.post("/v1/memories", json={"text": "I like tea"}, headers=auth(keys.carol))
    assert other.status_code == 201
