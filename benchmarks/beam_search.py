"""Search and assembly latency on BEAM's long user ↔ assistant chats (issue 32).

Run::

    python benchmarks/beam_search.py [--data ../shared/data/beam/100K] [--embedder hashing]
        [--budgets 1024,2048,4096,8192] [--json OUT.json] [--quick]

What it does
------------

* Reads BEAM's development chats with ``convmem eval beam``'s loader (``convmem.eval.beam``) and
  imports each as one user's conversation as that command does (``import_sample``), into a SQLite
  file in a temporary folder, then writes every turn's vector (``backfill_embeddings``).
* For every probing question with evidence, asked at the end of its chat: ``conv.search(question,
  k=10)`` lexical and hybrid (the configured defaults), the query's vector not cached (as a first
  search would run), p50/p95 of wall and of this process's CPU time in milliseconds.
* Then the question assembled as the next user message at each budget with the default options
  and the default time limits (retrieval: 1 s): p50/p95 of wall and CPU, and how many requests
  went without a part (the report's ``degraded``; goal 0).

The embedder is a name ``convmem.retrieval.vector.named_embedder`` knows; ``hashing`` (the
dependency-free one) is what a machine without torch can take, and its query embedding costs
next to nothing, so its hybrid figure is the search's own work without a model's (MiniLM adds
its query embedding, a few milliseconds). The goals (issue 32): hybrid search p95 ≤ 15 ms, no
request without retrieval.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from timing import Samples, load_average, measure_call

from convmem.config import Config
from convmem.context.assemble import AssemblyOptions
from convmem.engine import open as open_memory
from convmem.eval.beam import dataset
from convmem.eval.harness import import_sample
from convmem.model.profile import ModelProfile
from convmem.retrieval.vector import named_embedder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "beam" / "100K"
GOAL_P95_MS = 15.0


def run(data: Path, embedder_name: str, budgets: list[int], quick: bool) -> dict[str, Any]:
    chats = dataset(data)
    samples = chats.samples[:2] if quick else chats.samples
    embedder = named_embedder(embedder_name)
    searches = {"lexical": Samples(), "hybrid": Samples()}
    assembles = {budget: Samples() for budget in budgets}
    degraded: dict[str, int] = {}
    assemblies = 0
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(embed_on_write=False, tokenizers=("o200k_base",))
        with open_memory(str(Path(tmp) / "beam.db"), config=config, embedder=embedder) as memory:
            imported = [(s, *import_sample(memory, s, "beam")) for s in samples]
            memory.backfill_embeddings()
            if embedder is not None:
                embedder.embed(["warm up"])
            options = {
                "lexical": replace(memory.config.search, retrievers=("lexical",)),
                "hybrid": memory.config.search,
            }
            for sample, conv, _ in imported:
                questions = sample.questions[:4] if quick else sample.questions
                for question in questions:
                    for name, searched in options.items():
                        memory.vector_cache.forget_queries()
                        search = partial(conv.search, question.question, k=10, options=searched)
                        measure_call(search, searches[name])
                    for budget in budgets:
                        profile = ModelProfile(context_window=budget, max_output=0)
                        assemble = partial(
                            conv.assemble, question.question, model=profile,
                            options=AssemblyOptions(memory_k=0),
                        )  # fmt: skip
                        ctx = measure_call(assemble, assembles[budget])
                        assemblies += 1
                        for part in ctx.report.degraded:
                            degraded[part] = degraded.get(part, 0) + 1
    return {
        "benchmark": "beam_search",
        "embedder": embedder_name,
        "chats": [s.sample_id for s in samples],
        "turns": sum(len(s.turns) for s in samples),
        "questions": len(searches["lexical"].wall_ms),
        "search": {name: s.figures() for name, s in searches.items()},
        "assemble": {str(b): s.figures() for b, s in assembles.items()},
        "assemblies": assemblies,
        "degraded": dict(sorted(degraded.items())),
        "load_average": {"before": load_before, "after": load_average()},
    }


def table(result: dict[str, Any]) -> list[str]:
    lines = [
        f"BEAM chats {', '.join(result['chats'])}: {result['turns']} turns, "
        f"{result['questions']} questions, embedder {result['embedder']}, "
        f"load {result['load_average']['before']} -> {result['load_average']['after']}",
        f"{'':24} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8}",
    ]
    rows = [(f"search {n}", f) for n, f in result["search"].items()]
    rows += [(f"assemble {b} tokens", f) for b, f in result["assemble"].items()]
    for label, f in rows:
        lines.append(
            f"{label:24} {f['p50_ms']:8.2f} {f['p95_ms']:8.2f} "
            f"{f['cpu_p50_ms']:8.2f} {f['cpu_p95_ms']:8.2f}"
        )
    went_without = sum(result["degraded"].values())
    lines.append(
        f"assemblies without a part: {went_without} of {result['assemblies']} "
        f"({', '.join(f'{p} x{n}' for p, n in result['degraded'].items()) or 'none'}); goal 0"
    )
    hybrid = result["search"]["hybrid"]["p95_ms"]
    verdict = "met" if hybrid <= GOAL_P95_MS else "NOT met"
    lines.append(f"hybrid search p95 {hybrid:.2f} ms: goal <= {GOAL_P95_MS:.0f} ms {verdict}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="BEAM's chat folders")
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--budgets", default="1024,2048,4096,8192")
    parser.add_argument("--quick", action="store_true", help="two chats, four questions each")
    parser.add_argument("--json", type=Path, metavar="OUT.json")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    result = run(args.data, args.embedder, budgets, args.quick)
    print("\n".join(table(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
