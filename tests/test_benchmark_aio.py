"""Smoke run of ``benchmarks/aio_overhead.py``: it runs and writes its figures (never timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "aio_overhead.py"


def test_aio_overhead_benchmark_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--calls", "5", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert set(figures["cases"]) == {"record", "memories.get", "assemble"}
    for row in figures["cases"].values():
        assert row["sync_us"] > 0 and row["aio_us"] > 0
