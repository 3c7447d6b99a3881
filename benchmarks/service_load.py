"""Load on the HTTP service: concurrent clients appending and assembling over loopback.

Run::

    python benchmarks/service_load.py [--quick] [--json OUT.json]

What it does
------------

* Starts ``convmem serve`` (``--workers`` processes, default one; ``--threads`` handler threads
  each, default serve's own; JSON request logs at the info level written to a file) on a fresh
  database (``--backend``: SQLite in a temporary folder, or a PostgreSQL server of the run's own),
  and creates an application key with ``convmem keys create``.
* Creates the conversations (full run: 200, spread over 20 users; ``--quick``: 20 over 4) through
  the API, then runs the clients (full: 50 for 60 s; ``--quick``: 10 for 5 s) in one asyncio
  process, each on its own keep-alive connection (aiohttp: httpx cost as much CPU per
  request as the server, on the same two cores; the generator's CPU is reported). Each client
  loops over turns on a random conversation, as a chat backend would: append the user's
  message, assemble the request answering it (an 8k window, o200k tokenizer), append the
  assistant's reply — three requests a turn, each timed from send to full response. About
  one user message in fifty asks to remember something.
* Reports requests per second, p50 / p99 / max latency overall and per operation, and the error
  count: any response other than 2xx, and any transport failure, is an error. Goal: zero errors.

The server and the clients share the machine; the figures are for both on the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from benchmark_databases import BACKENDS, database
from timing import process_tree_cpu

ROOT = Path(__file__).resolve().parents[1]
_VOCABULARY = (
    "the flight hotel museum train ticket budget dinner plan visit city river bridge morning "
    "evening price booking seat window aisle luggage weather walk tour guide market coffee "
    "tram beach castle street square night early late cheap quiet busy local view old new "
    "best route"
)
WORDS = _VOCABULARY.split()
PREFERENCES = ("aisle seats", "window seats", "vegetarian food", "early flights", "quiet hotels")


@dataclass
class Recorder:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)

    def record(self, operation: str, seconds: float, status: int | str) -> None:
        self.latencies.setdefault(operation, []).append(seconds)
        # a status other than 2xx, or a transport failure named by its exception type
        if isinstance(status, str) or not 200 <= status < 300:
            self.errors[f"{operation}: {status}"] += 1


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict[str, float | int]:
    return {
        "count": len(values),
        "p50_ms": round(percentile(values, 50) * 1000, 2),
        "p99_ms": round(percentile(values, 99) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2),
        "mean_ms": round(sum(values) / len(values) * 1000, 2),
    }


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.02:
        return f"Remember that I prefer {rng.choice(PREFERENCES)}."
    words = rng.choices(WORDS, k=rng.randint(5, 60))
    return " ".join(words).capitalize() + "?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "convmem.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


class TransportFailure(Exception):
    """The connection failed or the response could not be read; named by its cause."""


@dataclass
class Response:
    status_code: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One simulated client's keep-alive connection: an aiohttp session held to one connection,
    its requests sequential as one client's turn is. aiohttp spends 0.26-0.29 ms of CPU a request
    here; httpx spent about 5 ms, as much as the server's own handling on the same two cores, so
    the generator, not the service, had set the rate."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self._base = f"http://{host}:{port}"
        self._headers = headers
        self._session: aiohttp.ClientSession | None = None

    async def request(
        self, method: str, path: str, *, json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Response:  # fmt: skip
        if self._session is None:
            self._session = aiohttp.ClientSession(
                self._base, headers=self._headers, connector=aiohttp.TCPConnector(limit=1),
                timeout=aiohttp.ClientTimeout(total=60),
            )  # fmt: skip
        try:
            async with self._session.request(method, path, json=json_body, headers=headers) as r:
                return Response(r.status, await r.read())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportFailure(type(exc).__name__) from exc

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


async def timed(
    connection: Connection, recorder: Recorder, operation: str, method: str, path: str,
    headers: dict[str, str], body: Any,
) -> Response | None:  # fmt: skip
    started = time.perf_counter()
    try:
        response = await connection.request(method, path, json_body=body, headers=headers)
    except TransportFailure as exc:
        recorder.record(operation, time.perf_counter() - started, str(exc))
        return None
    recorder.record(operation, time.perf_counter() - started, response.status_code)
    return response


async def client_loop(
    connection: Connection,
    recorder: Recorder,
    conversations: list[tuple[str, str]],
    deadline: float,
    seed: int,
) -> int:
    rng = random.Random(seed)
    turns = 0
    model = {"context_window": 8192, "max_output": 1024, "tokenizer": "o200k_base"}
    try:
        while time.perf_counter() < deadline:
            user, conversation = rng.choice(conversations)
            headers = {"X-Convmem-User": user}
            base = f"/v1/conversations/{conversation}"
            await timed(connection, recorder, "append", "POST", f"{base}/messages", headers,
                        {"role": "user", "content": sentence(rng)})  # fmt: skip
            await timed(connection, recorder, "assemble", "POST", f"{base}/assemble", headers,
                        {"model": model, "system": "You are a travel assistant."})  # fmt: skip
            await timed(connection, recorder, "append", "POST", f"{base}/messages", headers,
                        {"role": "assistant", "content": sentence(rng)})  # fmt: skip
            turns += 1
    finally:
        await connection.close()
    return turns


async def run_load(
    host: str, port: int, key: str, *, clients: int, conversations: int, users: int,
    seconds: float,
) -> dict[str, Any]:  # fmt: skip
    auth = {"Authorization": f"Bearer {key}"}
    setup = Connection(host, port, auth)
    made: list[tuple[str, str]] = []
    for n in range(conversations):
        user = f"user{n % users:03d}"
        response = await setup.request("POST", "/v1/conversations",
                                       json_body={"title": f"Trip {n}"},
                                       headers={"X-Convmem-User": user})  # fmt: skip
        if response.status_code != 201:
            raise SystemExit(f"creating a conversation gave HTTP {response.status_code}")
        made.append((user, response.json()["id"]))
    recorder = Recorder()
    cpu_before = time.process_time()
    started = time.perf_counter()
    deadline = started + seconds
    turns = await asyncio.gather(
        *(
            client_loop(Connection(host, port, auth), recorder, made, deadline, seed)
            for seed in range(clients)
        )
    )
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu_before
    metrics = (await setup.request("GET", "/metrics")).body.decode()
    await setup.close()
    every = [s for values in recorder.latencies.values() for s in values]
    return {
        "elapsed_s": round(elapsed, 2),
        "turns": sum(turns),
        "requests": len(every),
        "requests_per_s": round(len(every) / elapsed, 1),
        # the generator's own CPU: if it nears one core, it, not the service, sets the rate
        "client_cpu_s": round(client_cpu, 2),
        "client_cpu_ms_per_request": round(client_cpu / max(1, len(every)) * 1000, 3),
        "latency": summary(every),
        "by_operation": {op: summary(values) for op, values in recorder.latencies.items()},
        "errors": sum(recorder.errors.values()),
        "error_kinds": dict(recorder.errors),
        "server_5xx": sum(
            int(float(line.rsplit(" ", 1)[1]))
            for line in metrics.splitlines()
            if line.startswith("convmem_http_requests_total") and 'status="5' in line
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 clients for 5 s (a smoke test)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--conversations", type=int)
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite",
                        help="the database (postgresql: a pgserver of the run's own)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="service processes")
    parser.add_argument("--threads", type=int,
                        help="handler threads per process (default: serve's own)")  # fmt: skip
    args = parser.parse_args()
    clients = args.clients or (10 if args.quick else 50)
    seconds = args.seconds or (5.0 if args.quick else 60.0)
    conversations = args.conversations or (20 if args.quick else 200)
    users = max(1, conversations // 10)
    env = dict(os.environ)
    load_before = os.getloadavg()

    with (
        tempfile.TemporaryDirectory(prefix="convmem-load-") as folder,
        database(args.backend, Path(folder), "load") as db,
    ):
        key = cli("keys", "create", "--db", db, "--tenant", "bench", "--role", "app",
                  env=env).strip().splitlines()[-1]  # fmt: skip
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        log_path = Path(folder) / "server.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "convmem.cli.main",
                    "serve",
                    "--db",
                    db,
                    "--port",
                    str(port),
                    "--workers",
                    str(args.workers),
                    *(["--threads", str(args.threads)] if args.threads else []),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            try:
                wait_until_up(base_url, server)
                server_cpu = process_tree_cpu(server.pid)
                result = asyncio.run(
                    run_load("127.0.0.1", port, key, clients=clients,
                             conversations=conversations, users=users, seconds=seconds)
                )  # fmt: skip
                after = process_tree_cpu(server.pid)
                if server_cpu is not None and after is not None:
                    # the service's CPU per request: a figure a busy machine leaves nearly as is
                    result["server_cpu_s"] = round(after - server_cpu, 2)
                    result["server_cpu_ms_per_request"] = round(
                        (after - server_cpu) / max(1, result["requests"]) * 1000, 3
                    )
            finally:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
        log_lines, server_side = server_durations(log_path)

    report = {
        "benchmark": "service_load",
        "config": {
            "clients": clients,
            "seconds": seconds,
            "conversations": conversations,
            "users": users,
            "server": f"convmem serve --workers {args.workers}"
            + (f" --threads {args.threads}" if args.threads else "")
            + ": uvicorn, info-level JSON logs",
            "backend": args.backend,
            "turn": "append user message, assemble (8k window, o200k_base), append reply",
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            # other work on the machine skews the figures; the 1-minute load says how much
            "load_average_1m_before": round(load_before[0], 2),
            "load_average_1m_after": round(os.getloadavg()[0], 2),
        },
        "server_log_lines": log_lines,
        **result,
        # time inside the server (the access log's duration), against the clients' view above,
        # which adds queueing in the kernel and the client process on a shared machine
        "server_side": server_side,
    }
    latency = report["latency"]
    print(
        f"{report['requests']} requests in {report['elapsed_s']} s from {clients} clients over "
        f"{conversations} conversations: {report['requests_per_s']} requests/s, "
        f"p50 {latency['p50_ms']} ms, p99 {latency['p99_ms']} ms, max {latency['max_ms']} ms, "
        f"errors {report['errors']}"
    )
    for operation, figures in report["by_operation"].items():
        print(f"  {operation:<9} {figures['count']:>7} requests  p50 {figures['p50_ms']} ms  "
              f"p99 {figures['p99_ms']} ms")  # fmt: skip
    inside = report["server_side"].get("latency")
    if inside:
        print(f"  inside the server: p50 {inside['p50_ms']} ms, p99 {inside['p99_ms']} ms")
    print(f"  client CPU: {report['client_cpu_s']} s, "
          f"{report['client_cpu_ms_per_request']} ms a request")  # fmt: skip
    if "server_cpu_s" in report:
        print(f"  server CPU: {report['server_cpu_s']} s, "
              f"{report['server_cpu_ms_per_request']} ms a request")  # fmt: skip
    if report["errors"]:
        print(f"  errors: {report['error_kinds']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


def server_durations(log_path: Path) -> tuple[int, dict[str, Any]]:
    """The number of log lines, and p50 / p99 of the handling time the server logged for the
    load's routes (append and assemble)."""
    lines = log_path.read_text().splitlines()
    durations: dict[str, list[float]] = {}
    for line in lines:
        if '"http.request"' not in line:
            continue
        entry = json.loads(line)
        route = entry["route"]
        if route.endswith("/messages"):
            durations.setdefault("append", []).append(entry["duration_ms"] / 1000)
        elif route.endswith("/assemble"):
            durations.setdefault("assemble", []).append(entry["duration_ms"] / 1000)
    every = [d for values in durations.values() for d in values]
    figures = {op: summary(values) for op, values in durations.items()}
    return len(lines), {"latency": summary(every), "by_operation": figures} if every else {}


def wait_until_up(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the server exited before it came up")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not come up within 60 s")


if __name__ == "__main__":
    main()
