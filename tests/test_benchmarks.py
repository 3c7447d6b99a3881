"""Smoke run of ``benchmarks/prefix_stability.py --quick``: it runs and writes its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "prefix_stability.py"


def test_prefix_stability_quick(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    for key in (
        "convmem_cached_fraction",
        "sliding_window_cached_fraction",
        "convmem_tokens_per_turn",
        "sliding_window_tokens_per_turn",
    ):
        assert key in figures
    assert figures["measured_turns"] > 20
    assert figures["sliding_window_cached_fraction"] < 0.05  # about the system prompt's share
    assert figures["convmem_cached_fraction"] >= 0.75  # the goal, 0.8, holds over 300 turns
    assert figures["convmem_tokens_per_turn"] <= figures["sliding_window_tokens_per_turn"]
    # documents that change every turn sit after the window: the rest stays cached as without
    assert figures["convmem_with_documents_document_tokens_per_turn"] > 0
    assert figures["convmem_with_documents_cached_fraction_besides_documents"] >= 0.75
