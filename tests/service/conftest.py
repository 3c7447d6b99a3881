"""Fixtures for the service: an app over a real SQLite file, keys of every role in two tenants,
an httpx-based client, and a live uvicorn server for the browser and shutdown tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

import convmem
from convmem.service import create_app


@dataclass(frozen=True)
class Keys:
    """Tokens: tenant acme (users alice, bob) and tenant globex (user carol)."""

    acme_admin: str
    acme_app: str
    alice: str
    bob: str
    globex_admin: str
    globex_app: str
    carol: str


def auth(token: str, user: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    if user is not None:
        headers["X-Convmem-User"] = user
    return headers


@pytest.fixture
def keys(memory: convmem.Memory) -> Keys:
    issue = memory.keys.create
    return Keys(
        acme_admin=issue("acme", "admin").token,
        acme_app=issue("acme", "app").token,
        alice=issue("acme", "user", user="alice").token,
        bob=issue("acme", "user", user="bob").token,
        globex_admin=issue("globex", "admin").token,
        globex_app=issue("globex", "app").token,
        carol=issue("globex", "user", user="carol").token,
    )


@pytest.fixture
def app(memory: convmem.Memory) -> FastAPI:
    return create_app(memory)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    # real errors in the app fail the test instead of becoming 500s, except where a test asks
    with TestClient(app, raise_server_exceptions=True) as test_client:
        yield test_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def live_server(app: FastAPI) -> Iterator[str]:
    """The app on a real uvicorn server on loopback, in a thread."""
    with serving(app) as base_url:
        yield base_url


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=20)
