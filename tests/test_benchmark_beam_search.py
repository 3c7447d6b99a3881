"""Smoke run of ``benchmarks/beam_search.py --quick`` on a small chat in BEAM's layout: it
imports the chat, times lexical and hybrid search and the assemblies, and writes its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "beam_search.py"
TOPICS = ("the garden shed", "a budget for the trip", "the piano lessons", "my sister's visit")


def _chat(folder: Path) -> None:
    """A BEAM chat folder: 40 turns in two batches, two probing questions with evidence."""
    turns = []
    for i in range(40):
        role = "user" if i % 2 == 0 else "assistant"
        marker = " ->-> 1,1" if role == "user" else ""
        text = f"Turn {i} about {TOPICS[i % len(TOPICS)]}, with some detail.{marker}"
        turns.append({"role": role, "id": i, "content": text})
    batches = [
        {"time_anchor": "March-15-2024", "turns": [turns[:20]]},
        {"time_anchor": "March-20-2024", "turns": [turns[20:]]},
    ]
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(batches))
    questions = {
        "information_extraction": [
            {"question": "What did I say about the piano lessons?", "source_chat_ids": [2, 6]},
            {"question": "How was the budget for the trip?", "source_chat_ids": [1]},
        ]
    }
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))


def test_beam_search_quick(tmp_path: Path) -> None:
    _chat(tmp_path / "chats" / "1")
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--data", str(tmp_path / "chats"),
         "--budgets", "512,2048", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["chats"] == ["1"] and figures["turns"] == 40 and figures["questions"] == 2
    for ranking in ("lexical", "hybrid"):
        assert figures["search"][ranking]["n"] == 2
        assert figures["search"][ranking]["cpu_p95_ms"] > 0
    assert sorted(figures["assemble"]) == ["2048", "512"]
    assert figures["assemblies"] == 4
    # the parts assemblies went without, counted (not asserted empty: time limits are timing)
    assert sum(figures["degraded"].values()) <= figures["assemblies"]
    assert "hybrid search p95" in done.stdout
