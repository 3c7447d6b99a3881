"""Import rate: a ChatGPT export through the bulk path against one ``append`` at a time.

Usage::

    PYTHONPATH=src python benchmarks/import_rate.py [--conversations N] [--turns T]
                                                    [--repeat R] [--baseline-messages M]
                                                    [--json OUT.json]

Writes a synthetic ChatGPT export (N conversations of T user/assistant turns, every fifth
conversation with an edited turn as a second branch), imports it with ``convmem import
openai-chat``'s code into a fresh SQLite file R times and reports messages per second; then
appends the first M messages one ``Conversation.append`` at a time into another file, for the
baseline. Tokenizers are the default ones (o200k_base and cl100k_base counted at write, and the
estimate). Rates are given per wall-clock second and per CPU second of this process, best and
median of the R runs: the machine is shared, so the load average (1 minute, as ``uptime`` gives
it) is recorded before and after, and the CPU-second figure is the steadier one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import convmem
from convmem.importers import openai_chat
from convmem.importers.bulk import import_trees

WORDS = (
    "flight", "hotel", "Lisbon", "Porto", "seat", "aisle", "window", "budget", "museum", "dinner",
    "train", "ticket", "weather", "Friday", "morning", "evening", "booking", "price", "review",
    "luggage", "taxi",
)  # fmt: skip


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))).capitalize() + "."


def synthetic_export(conversations: int, turns: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    export = []
    for c in range(conversations):
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                            "children": []}}  # fmt: skip
        parent, clock = "root", 1_700_000_000.0 + c * 3600
        for t in range(turns * 2):
            key = f"c{c}-m{t}"
            role = "user" if t % 2 == 0 else "assistant"
            clock += 30
            mapping[key] = {"id": key, "parent": parent, "children": [], "message": {
                "id": key, "author": {"role": role}, "create_time": clock, "recipient": "all",
                "content": {"content_type": "text", "parts": [_sentence(rng)]}}}  # fmt: skip
            mapping[parent]["children"].append(key)
            parent = key
        if c % 5 == 0 and turns > 1:  # an edit of the second user turn: a second branch
            key, above = f"c{c}-edit", f"c{c}-m1"
            mapping[key] = {"id": key, "parent": above, "children": [], "message": {
                "id": key, "author": {"role": "user"}, "create_time": clock + 60,
                "content": {"content_type": "text", "parts": [_sentence(rng)]}}}  # fmt: skip
            mapping[above]["children"].append(key)
        export.append({"id": f"conv-{c}", "title": f"Trip {c}", "create_time": clock,
                       "mapping": mapping, "current_node": parent})  # fmt: skip
    return export


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _rates(messages: int, seconds: list[float]) -> dict[str, int]:
    return {
        "best": round(messages / min(seconds)),
        "median": round(messages / statistics.median(seconds)),
    }


def measure(conversations: int, turns: int, repeat: int, baseline_messages: int) -> dict[str, Any]:
    load_before = _load()
    walls: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "conversations.json"
        export.write_text(json.dumps(synthetic_export(conversations, turns)))
        trees = openai_chat.read(export)
        for run in range(repeat):
            with convmem.open(Path(folder) / f"bulk{run}.db") as mem:
                started, cpu = time.perf_counter(), time.process_time()
                report = import_trees(mem.scope("acme", "alice"), openai_chat.SOURCE, trees)
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
                again = import_trees(mem.scope("acme", "alice"), openai_chat.SOURCE, trees)
        rows = [n.message for t in trees for n in t.nodes][:baseline_messages]
        with convmem.open(Path(folder) / "append.db") as mem:
            conv = mem.scope("acme", "alice").create_conversation()
            started, cpu = time.perf_counter(), time.process_time()
            for new in rows:
                conv.append(new.role, new.content, created_at=new.created_at)
            append_seconds = time.perf_counter() - started
            append_cpu = time.process_time() - cpu
    wall, per_cpu = _rates(report.messages, walls), _rates(report.messages, cpus)
    return {
        "conversations": report.conversations,
        "messages": report.messages,
        "runs": repeat,
        "bulk_seconds": [round(s, 3) for s in walls],
        "bulk_cpu_seconds": [round(s, 3) for s in cpus],
        "bulk_messages_per_s": wall["best"],
        "bulk_messages_per_s_median": wall["median"],
        "bulk_messages_per_cpu_s": per_cpu["best"],
        "bulk_messages_per_cpu_s_median": per_cpu["median"],
        "rerun_already_imported": again.already_imported,
        "rerun_messages": again.messages,
        "append_messages": len(rows),
        "append_messages_per_s": round(len(rows) / append_seconds),
        "append_messages_per_cpu_s": round(len(rows) / append_cpu),
        "load_average_1m_before": load_before,
        "load_average_1m_after": _load(),
        "cpus": os.cpu_count(),
    }


def table(figures: dict[str, Any]) -> str:
    lines = [
        f"{figures['messages']:,} messages in {figures['conversations']:,} conversations, "
        f"{figures['runs']} run(s); load average {figures['load_average_1m_before']} -> "
        f"{figures['load_average_1m_after']} on {figures['cpus']} CPUs",
        f"{'path':<22}{'msg/s best':>12}{'msg/s median':>14}{'msg/CPU-s best':>16}"
        f"{'msg/CPU-s median':>18}",
        f"{'bulk import':<22}{figures['bulk_messages_per_s']:>12,}"
        f"{figures['bulk_messages_per_s_median']:>14,}{figures['bulk_messages_per_cpu_s']:>16,}"
        f"{figures['bulk_messages_per_cpu_s_median']:>18,}",
        f"{'append, one at a time':<22}{figures['append_messages_per_s']:>12,}{'':>14}"
        f"{figures['append_messages_per_cpu_s']:>16,}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-messages", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = measure(args.conversations, args.turns, args.repeat, args.baseline_messages)
    print(table(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    sys.exit(0)


if __name__ == "__main__":
    main()
