"""Operations: health, Prometheus metrics, request ids, content-free JSON logs, the key commands.
(The graceful shutdown and ``serve --embedder``, checked in SQLite's lock and tables:
``tests/store/sqlite/test_service_rows.py``.)"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

import convmem
from convmem.cli.main import main
from convmem.service.observability import JsonFormatter

from .conftest import Keys, auth

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
    # prometheus_client writes counts as floats ("1.0")
    assert f'convmem_http_requests_total{{method="GET",{route},status="200"}} 1.0' in text
    assert f'convmem_http_requests_total{{method="GET",{route},status="404"}} 1.0' in text
    assert 'convmem_http_requests_total{method="GET",route="/v1/memories",status="401"} 1.0' in text
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


def test_embedder_choices_are_named() -> None:
    from convmem.retrieval.vector import named_embedder

    assert named_embedder("none") is None
    assert isinstance(named_embedder("hashing"), convmem.HashingEmbedder)
    with pytest.raises(convmem.InvalidInput):
        named_embedder("word2vec")
    failed = CliRunner().invoke(main, ["serve", "--db", "x.db", "--embedder", "word2vec"])
    assert failed.exit_code == 2
