"""Never-store policy benchmark: recall per category and false positives on benign look-alikes.

Usage::

    PYTHONPATH=src python benchmarks/never_store.py [--json OUT.json] [--corpus PATH]
                                                    [--extra PATH ...] [--show-errors]

Runs :func:`convmem.memory.policy.check_text` over a labelled JSONL corpus (one
``{"text", "label", "note"}`` object a line; label is a content BlockReason value or ``benign``)
and prints, per category, how many positives were blocked, missed or blocked for another reason,
the benign false-positive rate, and the time per check (CPU and wall). ``--show-errors`` lists
the corpus line numbers and notes of misses and false positives (never the texts, which may hold
secret-shaped strings).

The extra corpora (by default the wrapped set ``never_store_wrapped.jsonl`` and the held-out sets
``never_store_heldout.jsonl``, ``never_store_heldout2.jsonl`` and ``never_store_heldout3.jsonl``,
each written after the rules it was first run against, and ``never_store_third_person.jsonl``:
people other than the user, by name — its first 30 lines built the rules, the next 22 found a gap
that was then closed, the last 24 were written before they ran and keep their two misses and one
ambiguous pet) are reported beside the main one, each
also per wrapping (``wrap``: JSON escapes, percent-encoding, markup, leetspeak, spelled digits,
base64 ...) and per language (``lang``) when its lines carry those fields: blocked recall over
the positives and benign lines wrongly blocked. The main corpus's figures stay at the top level
of the JSON; each corpus's are under ``corpora``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, get_args

import labelled_corpus  # benchmarks/labelled_corpus.py (the script's directory is on the path)

from convmem.memory.detect_common import Category
from convmem.memory.policy import BlockReason, check_text

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT_CORPUS = DATA / "never_store.jsonl"
DEFAULT_EXTRA = (
    DATA / "never_store_wrapped.jsonl",
    DATA / "never_store_heldout.jsonl",
    DATA / "never_store_heldout2.jsonl",
    DATA / "never_store_heldout3.jsonl",
    DATA / "never_store_third_person.jsonl",
)
CONTENT_CATEGORIES: tuple[str, ...] = get_args(Category)
TIMING_ROUNDS = 20


def _slice() -> dict[str, int]:
    return {"positives": 0, "blocked": 0, "benign": 0, "wrongly_blocked": 0}


def evaluate(rows: list[dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    cats = {
        c: {"positives": 0, "blocked": 0, "missed": 0, "wrong_reason": 0}
        for c in CONTENT_CATEGORIES
    }
    slices: dict[str, dict[str, dict[str, int]]] = {"wrap": {}, "lang": {}}
    benign_total = benign_blocked = 0
    errors: list[str] = []
    for row in rows:
        decision = check_text(row["text"])
        label = row["label"]
        where = f"line {row['line']} ({row.get('note', '')})"
        cuts = [slices[k].setdefault(row[k], _slice()) for k in ("wrap", "lang") if k in row]
        if label == "benign":
            benign_total += 1
            for cut in cuts:
                cut["benign"] += 1
                cut["wrongly_blocked"] += not decision.allowed
            if not decision.allowed:
                benign_blocked += 1
                errors.append(f"false positive [{decision.reason}] {where}")
            continue
        stats = cats[label]
        stats["positives"] += 1
        for cut in cuts:
            cut["positives"] += 1
            cut["blocked"] += not decision.allowed
        if decision.allowed:
            stats["missed"] += 1
            errors.append(f"missed [{label}] {where}")
        else:
            stats["blocked"] += 1
            if decision.reason != BlockReason(label):
                stats["wrong_reason"] += 1
                errors.append(f"wrong reason [{label} -> {decision.reason}] {where}")
    texts = [row["text"] for row in rows]
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(TIMING_ROUNDS):
        for text in texts:
            check_text(text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    checks = TIMING_ROUNDS * len(texts)
    result: dict[str, Any] = {
        "categories": cats,
        "benign": {
            "total": benign_total,
            "wrongly_blocked": benign_blocked,
            "rate": benign_blocked / benign_total if benign_total else 0.0,
        },
        "us_per_check": wall / checks * 1e6 if texts else 0.0,
        "cpu_us_per_check": cpu / checks * 1e6 if texts else 0.0,
    }
    for key, table in slices.items():
        if table:
            result[f"by_{key}"] = dict(sorted(table.items()))
    return result, errors


def evaluate_all(corpus: Path, extra: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """The main corpus's figures at the top level, every corpus's under ``corpora``."""
    result, errors = evaluate(labelled_corpus.load(corpus))
    corpora = {corpus.stem: dict(result)}
    for path in extra:
        if not path.exists():
            continue
        figures, more = evaluate(labelled_corpus.load(path))
        corpora[path.stem] = figures
        errors += [f"{path.stem}: {e}" for e in more]
    result["corpora"] = corpora
    return result, errors


def _render_one(result: dict[str, Any]) -> list[str]:
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
    for key in ("wrap", "lang"):
        cut = result.get(f"by_{key}")
        if not cut:
            continue
        lines.append("")
        lines.append(
            f"{'by ' + key:<34}{'positives':>10}{'blocked':>9}{'recall':>8}"
            f"{'benign':>8}{'wrongly':>9}"
        )
        for name, c in cut.items():
            recall = f"{c['blocked'] / c['positives']:.1%}" if c["positives"] else "-"
            lines.append(
                f"{name[:33]:<34}{c['positives']:>10}{c['blocked']:>9}{recall:>8}"
                f"{c['benign']:>8}{c['wrongly_blocked']:>9}"
            )
    lines.append("")
    lines.append(
        f"time per check: {result['cpu_us_per_check']:.1f} µs CPU, "
        f"{result['us_per_check']:.1f} µs wall"
    )
    return lines


def render(result: dict[str, Any]) -> str:
    corpora = result.get("corpora") or {"corpus": result}
    blocks = []
    for name, figures in corpora.items():
        blocks.append("\n".join([f"== {name}", *_render_one(figures)]))
    return "\n\n".join(blocks)


def main(argv: list[str] | None = None) -> int:
    p = labelled_corpus.parser(__doc__.splitlines()[0], DEFAULT_CORPUS)
    p.add_argument(
        "--extra",
        type=Path,
        action="append",
        help="another labelled corpus to report beside the main one (repeatable; default: the "
        "wrapped and held-out sets)",
    )
    p.add_argument("--no-extra", action="store_true", help="report the main corpus only")
    args = p.parse_args(argv)
    extra = [] if args.no_extra else (args.extra or list(DEFAULT_EXTRA))
    result, errors = evaluate_all(args.corpus, extra)
    labelled_corpus.report(args, result, errors, render)
    return 0


if __name__ == "__main__":
    sys.exit(main())
