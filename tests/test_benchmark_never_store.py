"""The never-store benchmark runs and writes its JSON (figures are read by people, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_never_store_benchmark_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "never_store.json"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "never_store.py"), "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert set(report["categories"]) >= {"credential", "payment_card", "government_id"}
    assert report["benign"]["total"] >= 100
    assert report["us_per_check"] > 0
