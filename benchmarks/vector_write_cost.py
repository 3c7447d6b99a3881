"""What writing vectors costs the store: turns a second a backfill stores, per backend and width.

Run::

    python benchmarks/vector_write_cost.py [--backend postgresql|sqlite] [--dimensions 1536]
        [--conversations 100] [--turns 50] [--long 0] [--runs 3] [--json OUT.json]

What it does
------------

* Imports ``--conversations`` conversations of ``--turns`` turns each (and, with ``--long N``,
  one more of ``N`` turns) into a fresh database with ``embed_on_write`` off, so every turn is
  left pending, then times ``Memory.backfill_embeddings()``: the hashing embedder at
  ``--dimensions`` (its vectors cost next to nothing to make, so the figure is the store's),
  wall and this process's CPU time, turns a second. A long conversation's older turns go into
  PostgreSQL's approximate index in the same call (``index_long_conversations``); the JSON says
  how many steps that took.
* Repeats on a fresh database ``--runs`` times; the table gives each run and the median.

The question it answers (issue 32): on PostgreSQL each vector written into an HNSW graph costs
a walk of it, and migration m029 put every turn of every conversation of a common width there;
m030 keeps only long conversations' turns in it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmark_databases import database
from timing import load_average

from convmem.config import Config
from convmem.engine import open as open_memory
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage
from convmem.retrieval.vector import HashingEmbedder

WORDS = ("kiln", "glaze", "budget", "review", "trail", "boots", "piano", "scales", "invoice")


def _tree(key: str, turns: int) -> ImportTree:
    nodes = [
        ImportNode(f"{key}-{i}", f"{key}-{i - 1}" if i else None,
                   NewMessage("user" if i % 2 == 0 else "assistant",
                              f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} note {i}"))
        for i in range(turns)
    ]  # fmt: skip
    return ImportTree(key, key, None, nodes, f"{key}-{turns - 1}")


def one_run(backend: str, dimensions: int, conversations: int, turns: int, long: int) -> dict[
    str, Any]:  # fmt: skip
    embedder = HashingEmbedder(dimensions)
    config = Config(embed_on_write=False)
    with (
        tempfile.TemporaryDirectory() as folder,
        database(backend, Path(folder)) as url,
        open_memory(url, config=config, embedder=embedder) as memory,
    ):
        for c in range(conversations):
            import_trees(memory.scope("bench", f"user-{c}"), "bench", [_tree(f"c{c}", turns)])
        if long:
            import_trees(memory.scope("bench", "long"), "bench", [_tree("long", long)])
        total = conversations * turns + long
        wall, cpu = time.perf_counter(), time.process_time()
        counts = memory.backfill_embeddings()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert counts["messages"] == total, counts
    return {
        "turns": total,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "turns_per_second": round(total / wall, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="postgresql", choices=("postgresql", "sqlite"))
    parser.add_argument("--dimensions", type=int, default=1536)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--long", type=int, default=0, help="one more conversation this long")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, metavar="OUT.json")
    args = parser.parse_args()
    before = load_average()
    runs = [
        one_run(args.backend, args.dimensions, args.conversations, args.turns, args.long)
        for _ in range(args.runs)
    ]
    result = {
        "benchmark": "vector_write_cost",
        "backend": args.backend,
        "dimensions": args.dimensions,
        "conversations": args.conversations,
        "turns_each": args.turns,
        "long": args.long,
        "runs": runs,
        "median_turns_per_second": statistics.median(r["turns_per_second"] for r in runs),
        "load_average": {"before": before, "after": load_average()},
    }
    print(f"{args.backend}, {args.dimensions} wide: {args.conversations} x {args.turns} turns"
          f"{f' + one of {args.long}' if args.long else ''}, load {before} -> "
          f"{result['load_average']['after']}")  # fmt: skip
    print(f"{'run':>4} {'turns':>7} {'wall s':>8} {'cpu s':>8} {'turns/s':>9}")
    for i, r in enumerate(runs, 1):
        print(f"{i:>4} {r['turns']:>7} {r['seconds']:>8.2f} {r['cpu_seconds']:>8.2f} "
              f"{r['turns_per_second']:>9.1f}")  # fmt: skip
    print(f"median {result['median_turns_per_second']:.1f} turns/s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
