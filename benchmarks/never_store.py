"""Never-store policy benchmark: recall per category and false positives on benign look-alikes.

Usage::

    PYTHONPATH=src python benchmarks/never_store.py [--json OUT.json] [--corpus PATH]
                                                    [--show-errors]

Runs :func:`convmem.memory.policy.check_text` over a labelled JSONL corpus (one
``{"text", "label", "note"}`` object a line; label is a content BlockReason value or ``benign``)
and prints, per category, how many positives were blocked, missed or blocked for another reason,
the benign false-positive rate, and the time per check. ``--show-errors`` lists the corpus line
numbers and notes of misses and false positives (never the texts, which may hold secret-shaped
strings).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, get_args

import labelled_corpus  # benchmarks/labelled_corpus.py (the script's directory is on the path)

from convmem.memory.detect_common import Category
from convmem.memory.policy import BlockReason, check_text

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "never_store.jsonl"
CONTENT_CATEGORIES: tuple[str, ...] = get_args(Category)
TIMING_ROUNDS = 20


def evaluate(rows: list[dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    cats = {
        c: {"positives": 0, "blocked": 0, "missed": 0, "wrong_reason": 0}
        for c in CONTENT_CATEGORIES
    }
    benign_total = benign_blocked = 0
    errors: list[str] = []
    for row in rows:
        decision = check_text(row["text"])
        label = row["label"]
        where = f"line {row['line']} ({row.get('note', '')})"
        if label == "benign":
            benign_total += 1
            if not decision.allowed:
                benign_blocked += 1
                errors.append(f"false positive [{decision.reason}] {where}")
            continue
        stats = cats[label]
        stats["positives"] += 1
        if decision.allowed:
            stats["missed"] += 1
            errors.append(f"missed [{label}] {where}")
        else:
            stats["blocked"] += 1
            if decision.reason != BlockReason(label):
                stats["wrong_reason"] += 1
                errors.append(f"wrong reason [{label} -> {decision.reason}] {where}")
    texts = [row["text"] for row in rows]
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(TIMING_ROUNDS):
        for text in texts:
            check_text(text)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    result = {
        "categories": cats,
        "benign": {
            "total": benign_total,
            "wrongly_blocked": benign_blocked,
            "rate": benign_blocked / benign_total if benign_total else 0.0,
        },
        "us_per_check": elapsed / (TIMING_ROUNDS * len(texts)) * 1e6 if texts else 0.0,
        "cpu_us_per_check": cpu / (TIMING_ROUNDS * len(texts)) * 1e6 if texts else 0.0,
    }
    return result, errors


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{'category':<26}{'positives':>10}{'blocked':>9}{'missed':>8}{'wrong':>7}{'recall':>8}"
    ]
    for cat, s in result["categories"].items():
        recall = s["blocked"] / s["positives"] if s["positives"] else 0.0
        lines.append(
            f"{cat:<26}{s['positives']:>10}{s['blocked']:>9}{s['missed']:>8}"
            f"{s['wrong_reason']:>7}{recall:>8.1%}"
        )
    b = result["benign"]
    lines.append("")
    lines.append(f"{'benign':<26}{'total':>10}{'blocked':>9}{'rate':>8}")
    lines.append(f"{'':<26}{b['total']:>10}{b['wrongly_blocked']:>9}{b['rate']:>8.1%}")
    lines.append("")
    lines.append(
        f"time per check: {result['us_per_check']:.1f} µs (CPU {result['cpu_us_per_check']:.1f} µs)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = labelled_corpus.parser(__doc__.splitlines()[0], DEFAULT_CORPUS).parse_args(argv)
    result, errors = evaluate(labelled_corpus.load(args.corpus))
    labelled_corpus.report(args, result, errors, render)
    return 0


if __name__ == "__main__":
    sys.exit(main())
