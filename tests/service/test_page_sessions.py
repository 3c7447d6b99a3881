"""Sign-in links over HTTP: an application mints one for a user with its app key; exchanging it
sets an HttpOnly, SameSite=Strict session cookie that acts for that user alone; a used, expired
or signed-out one is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.domain import page_sessions

from .conftest import Keys, auth


def _mint(client: TestClient, keys: Keys, user: str = "alice") -> str:
    made = client.post("/v1/page-sessions", headers=auth(keys.acme_app, user))
    assert made.status_code == 201, made.text
    url: str = made.json()["url"]
    assert url.startswith("http://testserver/#/sign-in/cmp_")
    return url.split("#/sign-in/", 1)[1]


def test_a_link_becomes_a_cookie_session_for_that_user_once(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    memory.scope("acme", "alice").remember("I prefer aisle seats.")
    memory.scope("acme", "bob").remember("I live in Porto.")
    token = _mint(client, keys)
    used = client.post("/v1/page-sessions/exchange", json={"token": token})
    assert used.status_code == 200, used.text
    assert used.json()["user"] == "alice"
    cookie = used.headers["set-cookie"]
    assert "convmem_page=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert token not in cookie  # the session is a new credential, not the link
    me = client.get("/v1/me").json()
    assert (me["tenant"], me["role"], me["user"]) == ("acme", "user", "alice")
    texts = [m["text"] for m in client.get("/v1/memories").json()]
    assert texts == ["I prefer aisle seats."]
    # the cookie stands for alice alone: naming bob is refused, admin routes too
    assert client.get("/v1/memories", headers={"X-Convmem-User": "bob"}).status_code == 403
    assert client.get("/v1/keys").status_code == 403
    # used once: refused after
    again = client.post("/v1/page-sessions/exchange", json={"token": token})
    assert again.status_code == 401 and again.json()["code"] == "link_refused"
    # sign out: the session ends on the server, not only in this client
    session = client.cookies.get("convmem_page")
    assert client.delete("/v1/page-sessions/current").status_code == 204
    assert client.get("/v1/me").status_code == 401
    assert session is not None
    client.cookies.set("convmem_page", session)  # a copy kept from before: refused too
    assert client.get("/v1/me").status_code == 401


def test_only_an_app_key_mints_and_an_expired_link_is_refused(
    client: TestClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.post("/v1/page-sessions", headers=auth(keys.alice)).status_code == 403
    assert client.post("/v1/page-sessions", headers=auth(keys.acme_admin)).status_code == 403
    assert client.post("/v1/page-sessions", headers=auth(keys.acme_app)).status_code == 400
    assert client.post("/v1/page-sessions").status_code == 401
    monkeypatch.setattr(page_sessions, "LINK_LIFETIME", timedelta(0))
    token = _mint(client, keys)
    late = client.post("/v1/page-sessions/exchange", json={"token": token})
    assert late.status_code == 401 and late.json()["code"] == "link_refused"
    assert "set-cookie" not in late.headers
    bad = client.post("/v1/page-sessions/exchange", json={"token": "cmp_x"})
    assert bad.status_code == 401
    assert client.post("/v1/page-sessions/exchange", json={}).status_code == 422
