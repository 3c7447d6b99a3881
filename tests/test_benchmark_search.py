"""Smoke run of the search benchmark on its quick dataset: it runs and writes the documented JSON.

Timings are never asserted here: they depend on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "search.py"
SEARCHES = {
    "conversation_lexical",
    "conversation_hybrid",
    "memories_lexical",
    "memories_hybrid",
    "conversation_hybrid_cold",
}


def test_quick_search_benchmark_writes_the_documented_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--embedder", "hashing", "--queries", "30",
         "--json", str(out)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(out.read_text())
    assert data["messages"] == 10_000 and data["memories"] == 1_000 and data["users"] == 100
    assert set(data["latency_ms"]) == SEARCHES
    for values in data["latency_ms"].values():
        assert values["n"] == 30
        assert values["p95"] >= values["p50"] > 0
    assert data["counts"]["messages"] == 10_000
