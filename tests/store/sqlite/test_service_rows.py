"""The service over an SQLite file: a graceful shutdown lets a write waiting on SQLite's write
lock finish, and ``serve --embedder`` stores vectors in the index table. (Moved from
``tests/service/test_operations.py``.)"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

import convmem
from tests.service.conftest import auth, free_port


def _wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited early")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not come up")


def _in_flight(base: str) -> int:
    text = httpx.get(f"{base}/metrics", timeout=5).text
    line = next(x for x in text.splitlines() if x.startswith("convmem_http_requests_in_flight "))
    return int(float(line.split()[1])) - 1  # less the metrics request itself (a float: "1.0")


def _refuses_connections(url: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
        except httpx.TransportError:
            return True
        time.sleep(0.1)
    return False


def test_graceful_shutdown_finishes_an_in_flight_write(db_path: Path, tmp_path: Path) -> None:
    with convmem.open(db_path) as memory:
        token = memory.keys.create("acme", "user", user="alice").token
        conversation = memory.scope("acme", "alice").create_conversation().id
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "convmem.cli.main",
            "serve",
            "--db",
            str(db_path),
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),
    )
    try:
        _wait_for(f"{base}/healthz", server)
        lock = sqlite3.connect(db_path, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # hold the write lock: the append below must wait
        result: dict[str, httpx.Response] = {}

        def append() -> None:
            result["response"] = httpx.post(
                f"{base}/v1/conversations/{conversation}/messages",
                json={"role": "user", "content": "written during shutdown"},
                headers=auth(token),
                timeout=30,
            )

        writer = threading.Thread(target=append)
        writer.start()
        deadline = time.monotonic() + 10
        while _in_flight(base) < 1:
            assert time.monotonic() < deadline, "the write never arrived"
            time.sleep(0.05)
        server.send_signal(signal.SIGTERM)
        assert _refuses_connections(f"{base}/healthz", within=10)  # no new work once stopping
        assert server.poll() is None  # still finishing the write
        lock.execute("ROLLBACK")
        lock.close()
        writer.join(timeout=20)
        # uvicorn re-raises the signal once it has shut down cleanly
        assert server.wait(timeout=20) in (0, -signal.SIGTERM)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
    assert result["response"].status_code == 201, result["response"].text
    with convmem.open(db_path) as memory:
        messages = memory.scope("acme", "alice").conversation(conversation).messages()
    assert [m.content for m in messages] == ["written during shutdown"]
    logged = (tmp_path / "server.log").read_text().splitlines()
    records = [json.loads(line) for line in logged if line.startswith("{")]
    assert any(r.get("event") == "http.request" and r.get("status") == 201 for r in records)
    assert all("written during shutdown" not in line for line in logged)


def test_serve_with_an_embedder_searches_by_meaning_too(db_path: Path, tmp_path: Path) -> None:
    with convmem.open(db_path) as memory:
        token = memory.keys.create("acme", "user", user="alice").token
        conversation = memory.scope("acme", "alice").create_conversation().id
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "convmem.cli.main", "serve", "--db", str(db_path),
               "--port", str(port), "--embedder", "hashing"]  # fmt: skip
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_for(f"{base}/healthz", server)
            url = f"{base}/v1/conversations/{conversation}"
            for line in ("I started pottery classes.", "The train was late today."):
                posted = httpx.post(f"{url}/messages", json={"role": "user", "content": line},
                                    headers=auth(token), timeout=10)  # fmt: skip
                assert posted.status_code == 201, posted.text
            found = httpx.get(f"{url}/search", params={"q": "pottery"}, headers=auth(token))
            assert found.status_code == 200, found.text
            top = found.json()[0]
            assert "pottery" in top["message"]["content"]
            assert "vector" in top["retrievers"]  # written with vectors, searched with them
        finally:
            server.terminate()
            server.wait(timeout=20)
    with sqlite3.connect(db_path) as db:
        (stored,) = db.execute(
            "SELECT count(*) FROM message_index WHERE embedder = 'hashing-256'"
        ).fetchone()
    assert stored == 2
