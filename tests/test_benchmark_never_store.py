"""The never-store benchmark runs and writes its JSON (figures are read by people, not asserted):
the main corpus at the top level, and every corpus (main, wrapped, held-out) under ``corpora``,
the wrapped ones also per wrapping and per language."""

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
    assert report["us_per_check"] > 0 and report["cpu_us_per_check"] > 0
    assert set(report["corpora"]) >= {
        "never_store",
        "never_store_wrapped",
        "never_store_heldout",
        "never_store_heldout2",
    }
    wrapped = report["corpora"]["never_store_wrapped"]
    assert wrapped["benign"]["total"] >= 100
    assert {"json \\u escapes", "url-encoded", "markdown bold", "base64", "leet"} <= set(
        wrapped["by_wrap"]
    )
    assert {"en", "es", "de", "fr", "nl", "tr"} <= set(wrapped["by_lang"])


def test_the_per_path_benchmark_writes_each_class_through_each_path(tmp_path: Path) -> None:
    """Its quick run stores nothing of any class on any path (the gate holds on every path) and
    writes the documented JSON; benign lines are counted apart."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "never_store_paths.py"
    out = tmp_path / "paths.json"
    run = subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text())
    assert set(data["paths"]) >= {"remember", "pin", "tool description", "mem0 import"}
    for figures in data["paths"].values():
        assert figures["benign_lines"] > 0
        for label, c in figures["classes"].items():
            assert c["stored"] == 0, label
