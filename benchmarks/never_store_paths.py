"""The never-store policy per write path: every labelled line of the corpora written through each
public path that stores user-derived text, on a real SQLite file, and what was kept.

``benchmarks/never_store.py`` asks the policy about each line; this asks convmem: a line is
*blocked* on a path when nothing holding it was stored (the path refused it: a ``blocked``
notice or ``NeverStoreViolation``). Paths: ``remember``; a chat turn "Remember that …"; a plain
chat turn (the heuristics' suggestions); a memory's correction; a pin; a registered tool's
description; a Mem0 import record. Goal (issue 30): every class blocked on every path, benign
lines wrongly blocked ≤ 1 %. A benign line that a path does not store for another reason (the
turn is no request to remember, no statement to suggest) is not counted as wrongly blocked:
only a refusal by the policy is.

    python benchmarks/never_store_paths.py [--quick] [--json OUT.json] [--corpus PATH ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from labelled_corpus import load

import convmem
from convmem.importers.mem0 import import_mem0
from convmem.memory.policy import BlockReason

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CORPORA = [
    DATA / "never_store.jsonl",
    DATA / "never_store_wrapped.jsonl",
    DATA / "never_store_heldout.jsonl",
    DATA / "never_store_heldout2.jsonl",
    DATA / "never_store_heldout3.jsonl",
]
QUICK_PER_CLASS = 12

# what a path did with a line: stored it, refused it by policy, or did not store it otherwise
STORED, REFUSED, PASSED_OVER = "stored", "refused", "passed over"
Outcome = str


# the never-store policy's reasons; a notice blocked for another (consent: "unclear_reference",
# memory switched off) is no refusal of the text's content
NEVER_STORE_REASONS = frozenset(reason.value for reason in BlockReason)


def _notice(notice: convmem.MemoryNotice) -> Outcome:
    if notice.status == "blocked":
        return REFUSED if notice.reason in NEVER_STORE_REASONS else PASSED_OVER
    return STORED if notice.memory is not None else PASSED_OVER


def _notices(message: convmem.Message) -> Outcome:
    outcomes = [_notice(n) for n in message.notices]
    if STORED in outcomes:
        return STORED
    return REFUSED if REFUSED in outcomes else PASSED_OVER


def _raises(write: Callable[[], object]) -> Outcome:
    try:
        write()
    except convmem.NeverStoreViolation:
        return REFUSED
    return STORED


def _remember(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    return _notice(user.remember(text))


def _chat_remember(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    return _notices(user.create_conversation().append("user", f"Remember that {text}"))


def _chat_statement(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    return _notices(user.create_conversation().append("user", text))


def _correction(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    saved = user.remember("I like green tea in the morning.").memory
    assert saved is not None
    return _notice(user.memories.update(saved.id, text))


def _pin(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    return _raises(lambda: user.pin(text))


def _tool(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    definition = {"name": f"tool_{n}", "description": text,
                  "input_schema": {"type": "object", "properties": {}}}  # fmt: skip
    return _raises(lambda: mem.tools.register(user.tenant, definition))


def _mem0(mem: convmem.Memory, user: convmem.Scope, text: str, n: int) -> Outcome:
    report = import_mem0(mem, user.tenant, [{"id": f"r{n}", "memory": text}], user=user.user)
    if report.blocked:
        return REFUSED
    return STORED if report.saved else PASSED_OVER


PATHS: dict[str, Callable[[convmem.Memory, convmem.Scope, str, int], Outcome]] = {
    "remember": _remember,
    "chat: remember that": _chat_remember,
    "chat: statement": _chat_statement,
    "correction": _correction,
    "pin": _pin,
    "tool description": _tool,
    "mem0 import": _mem0,
}


def _rows(corpora: Sequence[Path], quick: bool) -> list[dict[str, str]]:
    rows = [row for corpus in corpora for row in load(corpus)]
    if not quick:
        return rows
    taken: dict[str, int] = defaultdict(int)
    sample = []
    for row in rows:
        if taken[row["label"]] < QUICK_PER_CLASS:
            taken[row["label"]] += 1
            sample.append(row)
    return sample


def run(corpora: Sequence[Path], quick: bool) -> dict[str, Any]:
    rows = _rows(corpora, quick)
    counts: dict[str, dict[str, dict[str, int]]] = {
        path: defaultdict(lambda: defaultdict(int)) for path in PATHS
    }
    leaks: dict[str, list[str]] = defaultdict(list)
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, convmem.open(Path(folder) / "paths.db") as mem:
        for n, row in enumerate(rows):
            for path, write in PATHS.items():
                user = mem.scope("bench", f"u{n}-{len(leaks)}-{path.replace(' ', '_')[:12]}")
                try:
                    outcome = write(mem, user, row["text"], n)
                except convmem.InvalidInput:
                    outcome = PASSED_OVER  # malformed for this path (e.g. empty after trimming)
                counts[path][row["label"]][outcome] += 1
                if row["label"] != "benign" and outcome == STORED:
                    leaks[path].append(f"{row['label']} line {row['line']}")
    per_path = {}
    for path, by_label in counts.items():
        classes = {
            label: {"lines": sum(c.values()), "blocked": c[REFUSED] + c[PASSED_OVER],
                    "stored": c[STORED]}
            for label, c in sorted(by_label.items()) if label != "benign"
        }  # fmt: skip
        benign = by_label.get("benign", {})
        per_path[path] = {
            "classes": classes,
            "benign_lines": sum(benign.values()),
            "benign_refused": benign.get(REFUSED, 0),
        }
    writes = len(rows) * len(PATHS)
    return {
        "corpora": [c.name for c in corpora],
        "lines": len(rows),
        "paths": per_path,
        "leaks": {path: found[:20] for path, found in leaks.items()},
        "cpu_ms_per_write": (time.process_time() - cpu_start) * 1000 / max(writes, 1),
        "wall_ms_per_write": (time.perf_counter() - wall_start) * 1000 / max(writes, 1),
    }


def render(result: dict[str, Any]) -> str:
    labels = sorted({label for p in result["paths"].values() for label in p["classes"]})
    head = (
        f"{'path':<22}"
        + "".join(f"{label[:14]:>16}" for label in labels)
        + f"{'benign refused':>18}"
    )
    lines = [f"{result['lines']} lines of {', '.join(result['corpora'])}", head]
    for path, figures in result["paths"].items():
        cells = []
        for label in labels:
            c = figures["classes"].get(label)
            cells.append(
                f"{c['blocked'] / c['lines']:>15.1%} " if c and c["lines"] else f"{'-':>16}"
            )
        benign = figures["benign_lines"]
        share = figures["benign_refused"] / benign if benign else 0.0
        lines.append(f"{path:<22}" + "".join(cells)
                     + f"{figures['benign_refused']:>8}/{benign:<5} {share:>4.1%}")  # fmt: skip
    lines.append(
        f"per write: {result['cpu_ms_per_write']:.2f} ms CPU, {result['wall_ms_per_write']:.2f} ms "
        "wall; goal: 100 % blocked on every path, benign refused ≤ 1 %"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_PER_CLASS} lines a class")
    parser.add_argument("--corpus", type=Path, action="append", help="a labelled JSONL corpus")
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="also write results as JSON")
    args = parser.parse_args(argv)
    result = run(args.corpus or CORPORA, args.quick)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
