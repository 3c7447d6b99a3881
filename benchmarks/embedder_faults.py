"""Writes while the embedding API fails, rate-limits and hangs (issue 33, item 1).

Usage::

    PYTHONPATH=src:. python benchmarks/embedder_faults.py [--quick] [--backend sqlite|postgresql]
                                                          [--client minimal|openai]
                                                          [--encoding base64|float]
                                                          [--dimensions N]
                                                          [--server-in-process]
                                                          [--database URL]
                                                          [--json OUT.json]

A local OpenAI-compatible embeddings server (``tests/embed_server.py``, in a process of its own as
an embeddings API runs outside the application; ``--server-in-process``: a thread of the
benchmark's, whose JSON work then competes with the writes) serves the vectors; the database embeds
through a plain HTTP client of it (1 s timeout, no retries of its own; ``--client openai``:
convmem's own OpenAI-compatible client, ``openai+URL:hashing``, with its retries on 429 and 5xx,
time limit 1 s; ``--encoding float`` makes it ask for vectors as JSON numbers, not base64).
``--dimensions``: the vectors' width (64; OpenAI's text-embedding-3-small serves 1,536). Two runs
of the same writes — 5,000 appends over 50 conversations and 500 remembers (``--quick``: 500 and
50), each with an idempotency key and one in ten sent twice, as a client retrying after a lost
answer would:

- **baseline**: no embedder: the store's own time per write;
- **faults**: the server cycles through ok → fail (HTTP 500) → rate (HTTP 429) → hang (holds
  every request) → ok, a fifth of the writes in each mode.

Reported per run: wall and CPU time per write (p50 / p95 / max; CPU is this process's, every
thread: the background embedding's share included), writes that failed, writes slower than the
baseline's p99 plus 50 ms (and, as the noise floor, how many of the baseline's own writes pass that
bound), messages and memories stored (the retries stored nothing: 0 duplicates), and after the
faults the time until every vector is filled and the rows still without one (0). The load average
is recorded before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.embed_server: the same server the fault tests use

from benchmark_databases import BACKENDS, database  # noqa: E402
from timing import Samples, load_average  # noqa: E402

import convmem  # noqa: E402
from convmem.retrieval.vector import Embedder, named_embedder  # noqa: E402
from tests.embed_server import HttpEmbedder, embeddings_server  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "embedder-faults.json"
MODES = ("ok", "fail", "rate", "hang", "ok")
TOPICS = ("kiln", "glaze", "wheel", "clay", "studio", "firing", "porcelain", "stoneware")


def _writes(appends: int, remembers: int) -> list[tuple[str, int]]:
    """The write schedule: ("append", i) and ("remember", j), remembers spread among appends."""
    every = max(1, appends // max(1, remembers))
    out: list[tuple[str, int]] = []
    j = 0
    for i in range(appends):
        out.append(("append", i))
        if i % every == every - 1 and j < remembers:
            out.append(("remember", j))
            j += 1
    out += [("remember", k) for k in range(j, remembers)]
    return out


def run(url: str, embedder: Embedder | None, appends: int, remembers: int,
        server: Any = None) -> dict[str, Any]:  # fmt: skip
    samples = Samples()
    modes: list[str] = []  # the server's mode during each sample: where slowed writes fall
    failed = 0
    memory = convmem.open(url, embedder=embedder)
    try:
        alice = memory.scope("bench", "alice")
        convs = [alice.create_conversation(title=f"c{c}") for c in range(50)]
        schedule = _writes(appends, remembers)
        cpu_started = time.process_time()
        wall_started = time.perf_counter()
        for n, (kind, i) in enumerate(schedule):
            if server is not None:
                server.mode = MODES[min(len(MODES) - 1, n * len(MODES) // len(schedule))]
            topic = TOPICS[i % len(TOPICS)]
            sends = 2 if i % 10 == 3 else 1  # a client retrying after a lost answer
            for _ in range(sends):
                wall, cpu = time.perf_counter_ns(), time.process_time_ns()
                try:
                    if kind == "append":
                        convs[i % len(convs)].append(
                            "user", f"Turn {i}: the {topic} needs another look this week.",
                            idempotency_key=f"a{i}",
                        )  # fmt: skip
                    else:
                        alice.remember(
                            f"My {topic} number {i} is the electric one", subject=f"item-{i}",
                            idempotency_key=f"r{i}",
                        )  # fmt: skip
                except Exception:  # counted: the goal is none
                    failed += 1
                samples.add(time.perf_counter_ns() - wall, time.process_time_ns() - cpu)
                modes.append(f"{n * len(MODES) // len(schedule)}:{server.mode}" if server else "")
        writes_wall = time.perf_counter() - wall_started
        if server is not None:
            server.mode = "ok"
        recovered_at = time.perf_counter()
        filled = memory.wait_for_vectors(600)
        recovery_s = time.perf_counter() - recovered_at
        cpu_total = time.process_time() - cpu_started
        missing = {"turns": 0, "memories": 0}
        if embedder is not None:
            with memory.store.read() as tx:
                missing = {
                    "turns": len(tx.missing_message_vectors(embedder.name, 100_000)),
                    "memories": len(tx.missing_memory_vectors(embedder.name, 100_000)),
                }
        stored_messages = sum(len(c.messages()) for c in convs)
        stored_memories = len(alice.memories.list())
    finally:
        memory.close()
    return {
        "writes": len(samples.wall_ms),
        "failed": failed,
        **{f"write_{k}": v for k, v in samples.figures().items()},
        "write_max_ms": round(max(samples.wall_ms), 3),
        "writes_wall_s": round(writes_wall, 2),
        "cpu_s": round(cpu_total, 2),
        "messages_stored": stored_messages,
        "memories_stored": stored_memories,
        "duplicates": (stored_messages - appends) + (stored_memories - remembers),
        "recovery_s": round(recovery_s, 2),
        "all_filled": filled,
        "missing_vectors": missing,
        "_wall_ms": samples.wall_ms,
        "_modes": modes,
    }


def _client(args: argparse.Namespace, server_url: str) -> Embedder:
    """The embedder of the faults run: both speak the server's protocol, 1 s per request."""
    width = args.dimensions
    if args.client == "minimal":
        return HttpEmbedder(server_url, dimensions=width, timeout=1.0)
    options = f"dimensions={width}&timeout=1&encoding_format={args.encoding}"
    embedder = named_embedder(f"openai+{server_url}:hashing?{options}")
    assert embedder is not None
    return embedder


@contextmanager
def _fresh(args: argparse.Namespace, folder: Path, name: str) -> Iterator[str]:
    """The database of one run: the one given, else a fresh one of ``--backend``."""
    if args.database:
        yield args.database
        return
    with database(args.backend, folder, name) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 appends and 50 remembers")
    parser.add_argument("--database", help="a database URL (default: a fresh SQLite file)")
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite",
                        help="without --database: a fresh database of this backend per run "
                             "(baseline and faults alike)")  # fmt: skip
    parser.add_argument(
        "--client",
        choices=("minimal", "openai"),
        default="minimal",
        help="the test's minimal HTTP client, or convmem's OpenAI-compatible one",
    )
    parser.add_argument("--encoding", choices=("base64", "float"), default="base64",
                        help="--client openai: how the vectors travel")  # fmt: skip
    parser.add_argument("--dimensions", type=int, default=64, help="the vectors' width")
    parser.add_argument("--server-in-process", action="store_true",
                        help="the embeddings server in a thread of this process")  # fmt: skip
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()
    appends, remembers = (500, 50) if args.quick else (5000, 500)
    load_before = load_average()
    figures: dict[str, Any] = {
        "appends": appends,
        "remembers": remembers,
        "backend": "given" if args.database else args.backend,
        "client": args.client,
        "encoding": args.encoding if args.client == "openai" else "float",
        "dimensions": args.dimensions,
        "server": "in-process" if args.server_in_process else "process",
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        embeddings_server(
            args.dimensions, hang_seconds=60, process=not args.server_in_process
        ) as server,
    ):
        run(os.path.join(tmp, "warm-up.db"), None, 20, 2)  # tokenizers loaded, code paths warm
        # a database given is one fresh database: the faults run only (no baseline beside it)
        for name in ("faults",) if args.database else ("baseline", "faults"):
            embedder = None if name == "baseline" else _client(args, server.url)
            with _fresh(args, Path(tmp), name) as url:
                figures[name] = run(url, embedder, appends, remembers,
                                    server if embedder else None)  # fmt: skip
        figures["server_requests"] = dict(server.requests)
    base = figures.get("baseline", {})
    bound = None
    if "_wall_ms" in base and "faults" in figures:
        ordered = sorted(base["_wall_ms"])
        bound = ordered[int(0.99 * (len(ordered) - 1))] + 50.0
        faults = figures["faults"]
        slowed = [m for w, m in zip(faults["_wall_ms"], faults["_modes"], strict=True) if w > bound]
        faults["slowed_writes"] = len(slowed)
        # the same bound over the baseline's own writes: how many of the store's own outliers
        # (checkpoints, the scheduler) a run of this length shows with no embedder at all
        base["over_bound"] = sum(1 for w in base["_wall_ms"] if w > bound)
        faults["slowed_by_mode"] = {m: slowed.count(m) for m in sorted(set(slowed))}
        figures["slow_bound_ms"] = round(bound, 1)
    for name in ("baseline", "faults"):
        figures.get(name, {}).pop("_wall_ms", None)
        figures.get(name, {}).pop("_modes", None)
    figures["load_before"], figures["load_after"] = load_before, load_average()
    rows = [("", "baseline", "faults")]
    for key in ("writes", "failed", "write_p50_ms", "write_p95_ms", "write_max_ms",
                "write_cpu_p50_ms", "write_cpu_p95_ms", "over_bound", "slowed_writes",
                "slowed_by_mode", "cpu_s", "messages_stored", "memories_stored", "duplicates",
                "recovery_s", "all_filled", "missing_vectors"):  # fmt: skip
        rows.append((key, str(base.get(key, "")), str(figures.get("faults", {}).get(key, ""))))
    width = max(len(r[0]) for r in rows)
    for row in rows:
        print(f"{row[0]:<{width}}  {row[1]:>24}  {row[2]:>24}")
    print(f"slow bound (baseline p99 + 50 ms): {figures.get('slow_bound_ms')} ms; "
          f"server requests by mode: {figures['server_requests']}; "
          f"load {load_before} -> {figures['load_after']}")  # fmt: skip
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
