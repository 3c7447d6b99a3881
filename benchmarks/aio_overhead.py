"""What convmem.aio's hop to the worker pool costs per call.

Usage::

    PYTHONPATH=src python benchmarks/aio_overhead.py [--calls N] [--json OUT.json]

Times the same calls made synchronously and awaited through ``convmem.aio`` one after another
on a real SQLite file: a cheap read (``conversation.record()``), a memory lookup
(``memories.get``) and an assembly of the next request (``assemble``, 40 stored turns). The
overhead per call is the difference of the medians of rounds of ``--calls`` calls each. Figures
taken on a loaded machine are noisy; compare runs made together.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import convmem
import convmem.aio

ROUNDS = 7


async def _per_call(
    sync_call: Callable[[], Any], async_call: Callable[[], Awaitable[Any]], calls: int
) -> tuple[float, float, float, float]:
    """Median seconds per call, sync and awaited, in wall and in CPU time (this process's, all
    threads: the aio pool's thread too); rounds alternate so load drifts hit both."""
    sync_rounds, async_rounds, sync_cpu, async_cpu = [], [], [], []
    for _ in range(ROUNDS):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            sync_call()
        sync_rounds.append((time.perf_counter() - start) / calls)
        sync_cpu.append((time.process_time() - cpu) / calls)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            await async_call()
        async_rounds.append((time.perf_counter() - start) / calls)
        async_cpu.append((time.process_time() - cpu) / calls)
    return (
        statistics.median(sync_rounds), statistics.median(async_rounds),
        statistics.median(sync_cpu), statistics.median(async_cpu),
    )  # fmt: skip


async def measure(db: Path, calls: int) -> dict[str, Any]:
    async with convmem.aio.open(db) as mem:
        user = mem.scope("acme", "alice")
        conv = await user.create_conversation(title="bench")
        for i in range(20):
            await conv.append("user", f"Question {i} about the itinerary.")
            await conv.append("assistant", f"Answer {i} about the itinerary.")
        notice = await user.remember("I prefer aisle seats.")
        assert notice.memory is not None
        memory_id = notice.memory.id
        sync_user, sync_conv = user.sync, conv.sync
        cases: dict[str, tuple[Callable[[], Any], Callable[[], Awaitable[Any]]]] = {
            "record": (sync_conv.record, conv.record),
            "memories.get": (lambda: sync_user.memories.get(memory_id),
                             lambda: user.memories.get(memory_id)),
            "assemble": (lambda: sync_conv.assemble("Which seat?"),
                         lambda: conv.assemble("Which seat?")),
        }  # fmt: skip
        figures: dict[str, Any] = {"calls_per_round": calls, "rounds": ROUNDS, "cases": {}}
        for name, (sync_call, async_call) in cases.items():
            sync_s, async_s, sync_cpu, async_cpu = await _per_call(sync_call, async_call, calls)
            figures["cases"][name] = {
                "sync_us": round(sync_s * 1e6, 1),
                "aio_us": round(async_s * 1e6, 1),
                "overhead_us": round((async_s - sync_s) * 1e6, 1),
                "sync_cpu_us": round(sync_cpu * 1e6, 1),
                "aio_cpu_us": round(async_cpu * 1e6, 1),
            }
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        figures = asyncio.run(measure(Path(folder) / "aio.db", args.calls))
    figures["load_average"] = list(os.getloadavg())
    for name, row in figures["cases"].items():
        print(f"{name:<14} sync {row['sync_us']:>9.1f} µs   aio {row['aio_us']:>9.1f} µs   "
              f"overhead {row['overhead_us']:>7.1f} µs/call   cpu sync {row['sync_cpu_us']:>9.1f} "
              f"µs aio {row['aio_cpu_us']:>9.1f} µs")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    sys.exit(0)


if __name__ == "__main__":
    main()
