"""Operations: health, Prometheus metrics, request ids, content-free JSON logs, the key commands,
and a graceful shutdown that lets an in-flight write finish."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

import convmem
from convmem.cli import main
from convmem.service.observability import JsonFormatter

from .conftest import Keys, auth, free_port

MARKER = "Zanzibar-7731"  # content that must never reach a log line


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_docs_page_loads_swagger_ui_from_the_service_itself(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    sources = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page.text)
    assert sources and all(url.startswith("/docs/assets/") for url in sources), sources
    assert "http" not in page.text  # no CDN, no other host
    for url in sources:
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert len(asset.content) > 100
    assert "SwaggerUIBundle" in client.get("/docs/assets/swagger-ui-bundle.js").text


def test_request_ids_are_echoed_or_made(client: TestClient) -> None:
    given = client.get("/healthz", headers={"X-Request-ID": "trace-42.a"})
    assert given.headers["x-request-id"] == "trace-42.a"
    made = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert made.headers["x-request-id"] != "bad id with spaces"
    assert len(made.headers["x-request-id"]) == 32


def test_metrics_count_requests_by_route_template_and_status(
    client: TestClient, keys: Keys
) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    client.get(f"/v1/conversations/{cid}", headers=h)
    client.get("/v1/conversations/conv_missing", headers=h)
    client.get("/v1/memories")
    text = client.get("/metrics").text
    route = 'route="/v1/conversations/{conversation_id}"'
    assert f'convmem_http_requests_total{{method="GET",{route},status="200"}} 1' in text
    assert f'convmem_http_requests_total{{method="GET",{route},status="404"}} 1' in text
    assert 'convmem_http_requests_total{method="GET",route="/v1/memories",status="401"} 1' in text
    assert "convmem_http_request_duration_seconds_bucket" in text
    assert 'le="+Inf"' in text
    assert cid not in text  # templates, not raw paths
    assert client.get("/metrics").headers["content-type"].startswith("text/plain")


def test_logs_are_json_with_request_ids_and_no_content(
    client: TestClient, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="convmem")
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={"title": MARKER}, headers=h).json()["id"]
    base = f"/v1/conversations/{cid}"
    client.post(f"{base}/messages", json={"role": "user", "content": f"Remember that {MARKER}"},
                headers=h)  # fmt: skip
    client.post(f"{base}/assemble", json={"user_message": MARKER}, headers=h)
    client.post("/v1/memories", json={"text": f"I like {MARKER}"}, headers=h)
    client.get("/v1/memories/search", params={"q": MARKER}, headers=h)
    client.post(f"{base}/messages", json={"role": "nobody", "content": MARKER}, headers=h)
    client.post(f"{base}/messages", json={"role": "tool", "content": MARKER, "tool_call_id": "x"},
                headers=h)  # fmt: skip
    client.get("/v1/export", headers=h)
    client.post("/v1/memories", json={"text": f"password {MARKER}!Aa1"}, headers=h)

    formatter = JsonFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    requests = [json.loads(line) for line in lines if '"http.request"' in line]
    assert len(requests) == 9
    for entry in requests:
        assert entry["request_id"]
        assert entry["route"].startswith("/v1/")
        assert entry["key_id"].startswith("key_")
        assert isinstance(entry["status"], int)
    assert {entry["status"] for entry in requests} >= {200, 201, 422}
    assert all(MARKER not in line for line in lines)


def test_the_keys_commands(db_path: Path) -> None:
    runner = CliRunner()
    base = ["--db", str(db_path), "--tenant", "acme"]
    created = runner.invoke(main, ["keys", "create", *base, "--role", "user", "--user", "alice"])
    assert created.exit_code == 0, created.output
    token = created.output.strip().splitlines()[-1]
    with convmem.open(db_path) as memory:
        key = memory.keys.authenticate(token)
        assert key is not None
        assert (key.tenant_id, key.role, key.user_id) == ("acme", "user", "alice")
    listed = runner.invoke(main, ["keys", "list", *base])
    assert key.id in listed.output
    assert token not in listed.output
    as_json = json.loads(runner.invoke(main, ["keys", "list", *base, "--json"]).output)
    assert as_json[0]["id"] == key.id
    revoked = runner.invoke(main, ["keys", "revoke", *base, key.id])
    assert revoked.exit_code == 0
    with convmem.open(db_path) as memory:
        assert memory.keys.authenticate(token) is None
    wrong = runner.invoke(main, ["keys", "create", *base, "--role", "user"])
    assert wrong.exit_code == 2
    other = runner.invoke(main, ["keys", "revoke", "--db", str(db_path), "--tenant", "globex",
                                 key.id])  # fmt: skip
    assert other.exit_code == 2


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
    return int(line.split()[1]) - 1  # less the metrics request itself


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
        [sys.executable, "-m", "convmem.cli", "serve", "--db", str(db_path), "--port", str(port)],
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
    command = [sys.executable, "-m", "convmem.cli", "serve", "--db", str(db_path),
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


def test_embedder_choices_are_named() -> None:
    from convmem.retrieval.vector import named_embedder

    assert named_embedder("none") is None
    assert isinstance(named_embedder("hashing"), convmem.HashingEmbedder)
    with pytest.raises(convmem.InvalidInput):
        named_embedder("word2vec")
    failed = CliRunner().invoke(main, ["serve", "--db", "x.db", "--embedder", "word2vec"])
    assert failed.exit_code == 2
