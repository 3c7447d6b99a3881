"""The consent benchmark runs and writes its JSON (figures are read by people, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")


def test_consent_benchmark_quick_run_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "consent.json"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "consent.py"), "--quick", "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    report = json.loads(out.read_text())
    corpus = report["corpus"]
    assert corpus["lines"] >= 300
    assert set(corpus["labels"]) == {"save", "propose", "forget", "none"}
    assert {"request/de", "reminiscence/fr", "forget-lookalike/nl"} <= set(corpus["groups"])
    if LOCOMO.exists():  # development data, not in the repository
        locomo = report["locomo"]
        assert locomo["user_turns"] > 0
        assert {"saves_per_1000", "supersessions_per_1000", "deletions_per_1000",
                "proposals_per_1000", "proposals_standing_alone"} <= set(locomo)  # fmt: skip
