"""Smoke run of the round-trip benchmark on a real PostgreSQL: it counts what the driver sent for
each step of a chat turn, through the library and the service, and writes the documented JSON.
Counts are not asserted against a goal here (the store's work changes them); that they were
counted at all is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.extras import module_of_extra

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "round_trips.py"


def test_quick_run_counts_every_step_of_a_chat_turn(postgres_server: str, tmp_path: Path) -> None:
    module_of_extra("psycopg", "postgres")
    out = tmp_path / "out.json"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "CONVMEM_BENCH_POSTGRES_URL": postgres_server},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text())
    assert [r["surface"] for r in data["results"]] == ["library", "service"]
    for result in data["results"]:
        steps = result["steps"]
        assert set(steps) == {"append user", "assemble", "append reply"}
        for counts in steps.values():
            assert counts["round_trips"] >= counts["transactions"] >= 1
        turn = result["turn"]
        assert turn["round_trips"] >= max(s["round_trips"] for s in steps.values())
        assert result["cpu_ms_median"] > 0
