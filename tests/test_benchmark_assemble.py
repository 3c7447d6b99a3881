"""Smoke run of the assembly benchmark: it runs to the end and writes the documented JSON.

Timings are never asserted here: they depend on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "assemble.py"
RESULT_KEYS = {
    "messages",
    "budget",
    "convmem_median_ms",
    "convmem_p95_ms",
    "convmem_cpu_median_ms",
    "baseline_median_ms",
    "baseline_cpu_median_ms",
}
KINDS = {"rare", "common", "name", "date"}
FIGURES = {"p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms", "n"}


def test_quick_benchmark_writes_the_documented_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "speed-up" in completed.stdout

    data = json.loads(out.read_text())
    assert isinstance(data, dict)
    results = data["results"]
    assert isinstance(results, list)
    assert results
    budgets = {row["budget"] for row in results}
    sizes = {row["messages"] for row in results}
    assert len(budgets) >= 2
    assert len(sizes) >= 2
    assert len(results) == len(budgets) * len(sizes)
    for row in results:
        assert set(row) == RESULT_KEYS
        assert isinstance(row["messages"], int)
        assert isinstance(row["budget"], int)
        assert row["messages"] > 0
        assert row["budget"] > 0
        for key in ("convmem_median_ms", "convmem_p95_ms", "baseline_median_ms"):
            assert isinstance(row[key], int | float)
            assert row[key] > 0
        assert row["convmem_p95_ms"] >= row["convmem_median_ms"]
        assert row["convmem_cpu_median_ms"] > 0 and row["baseline_cpu_median_ms"] > 0
    assert data["write_rate_per_s"] > 0

    # the real questions: each kind at each size and budget, asked with and without recall,
    # drawn from the history's own words (each finds evicted turns to bring back)
    questions = data["questions"]
    assert {(q["messages"], q["budget"], q["kind"]) for q in questions} == {
        (size, budget, kind) for size in sizes for budget in budgets for kind in KINDS
    }
    for q in questions:
        for mode in ("with_retrieval", "without_retrieval"):
            assert set(q[mode]) == FIGURES
            assert q[mode]["p95_ms"] >= q[mode]["p50_ms"] > 0 and q[mode]["cpu_p50_ms"] > 0
        assert q["retrieved_requests"] > 0, q["question"]
        assert 0 <= q["retrieval_skipped"] <= q["with_retrieval"]["n"]
    for goal in data["real_question_goals"]:
        assert goal["growth"] > 0 and 0 <= goal["retrieval_skipped_share"] <= 1

    # retrieved documents: 20 of 500 tokens at each size and budget, scored and unscored, beside
    # the same request without them; the section's room took some and cut or dropped the rest
    documents = data["documents"]
    assert {(d["messages"], d["budget"]) for d in documents} == {
        (size, budget) for size in sizes for budget in budgets
    }
    for row in documents:
        for mode in ("without", "scored", "unscored"):
            assert set(row[mode]) == FIGURES and row[mode]["cpu_p50_ms"] > 0
        assert 0 < row["documents_sent"] < 20 and row["documents_tokens"] > 0


def test_imported_sizes_are_the_scripts_first_messages_and_ask_the_same_questions(
    tmp_path: Path,
) -> None:
    """``--import`` builds each size as a conversation of its own by the bulk import: the same
    messages the appending run writes, so the same questions are asked of it."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import assemble
    finally:
        sys.path.remove(str(SCRIPT.parent))
    import convmem

    with convmem.open(str(tmp_path / "bench.db")) as memory:
        scope = memory.scope("bench", "user")
        conv, vocabulary = assemble.imported(scope, 300)
        grown = scope.create_conversation()
        appended = assemble.Vocabulary()
        assemble.grow(grown, assemble.Script(assemble.SEED), 0, 300, appended)
        imported = [(m.role, m.content, m.tool_calls, m.tool_call_id) for m in conv.branch()]
        assert len(imported) == 300
        assert imported == [
            (m.role, m.content, m.tool_calls, m.tool_call_id) for m in grown.branch()
        ]
        assert vocabulary.questions() == appended.questions()
        ctx = conv.assemble(vocabulary.questions()["rare"], model=assemble.profile_for(4096))
        assert ctx.report.retrieved_ids  # the rare word's turn, evicted, comes back
