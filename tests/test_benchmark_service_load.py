"""Smoke run of the service load benchmark: a real server, a few clients, the documented JSON.

Timings are never asserted here: they depend on the machine. Errors are: the goal is zero.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "service_load.py"


def test_quick_load_run_has_no_errors_and_writes_the_documented_json(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--seconds", "3", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "requests/s" in completed.stdout

    data = json.loads(out.read_text())
    assert data["benchmark"] == "service_load"
    assert data["config"]["clients"] == 10
    assert data["config"]["conversations"] == 20
    assert data["errors"] == 0, data["error_kinds"]
    assert data["server_5xx"] == 0
    assert data["requests"] > 0
    assert data["requests"] == data["turns"] * 3  # a turn under way at the deadline completes
    assert data["requests_per_s"] > 0
    for figures in (data["latency"], *data["by_operation"].values()):
        assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert set(data["by_operation"]) == {"append", "assemble"}
    assert data["server_log_lines"] >= data["requests"]
    inside = data["server_side"]["latency"]
    assert inside["count"] >= data["requests"]
    assert 0 < inside["p50_ms"] <= inside["p99_ms"]
