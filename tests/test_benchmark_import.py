"""Smoke run of ``benchmarks/import_rate.py``: it runs and writes its figures (never timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "import_rate.py"


def test_import_rate_benchmark_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--conversations", "6", "--turns", "3",
         "--baseline-messages", "10", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert (figures["conversations"], figures["messages"]) == (6, 6 * 6 + 2)  # two edits
    assert (figures["rerun_already_imported"], figures["rerun_messages"]) == (6, 0)
    assert figures["bulk_messages_per_s"] > 0 and figures["append_messages_per_s"] > 0
