"""A tenant's embedder switched under load (issue 33 item 5): searches answer throughout.

Usage::

    PYTHONPATH=src:. python benchmarks/embedder_switch.py [--turns N] [--database URL]
                                                          [--json OUT.json]

A tenant with ``--turns`` indexed turns (default 2,000, one word of its own in each) and a
memory every tenth turn, embedded by ``hashing-256``, is switched to ``hashing-64``
(``Memory.embedder_switch.switch``, batches of 128) while one thread searches its turns and
memories for those words and another appends turns to another conversation of the tenant.

Reported: searches answered, searches that raised, searches whose row was missing from the
top 5 (the goal of all three: every search answers and finds its row), appends made and failed
during the switch, the switch's wall time and this process's CPU time (every thread), the search
latency (p50 / p95 / max), and the load average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import Samples, load_average  # noqa: E402

import convmem  # noqa: E402

OLD = convmem.HashingEmbedder(256)
NEW = convmem.HashingEmbedder(64)


def _word(i: int) -> str:
    return f"zorblat{i:05d}"


def run(url: str, turns: int) -> dict[str, Any]:
    memory = convmem.open(url, embedder=OLD)
    try:
        alice = memory.scope("bench", "alice")
        conv = alice.create_conversation()
        ids: dict[str, str] = {}
        memories: dict[str, str] = {}
        for i in range(turns):
            ids[_word(i)] = conv.append("user", f"the crate {_word(i)} went to the harbour").id
            if i % 10 == 0:
                kept = alice.remember(f"My locker word for crate {i} is {_word(i)}.").memory
                assert kept is not None
                memories[_word(i)] = kept.id
        memory.wait_for_vectors(600)
        stop = threading.Event()
        answered, errors, misses, appended, append_errors = [0], [0], [0], [0], [0]
        samples = Samples()

        def search() -> None:
            n = 0
            while not stop.is_set():
                word = _word((n * 7919) % turns)
                n += 1
                wall, cpu = time.perf_counter_ns(), time.process_time_ns()
                try:
                    found = [h.message.id for h in conv.search(word, k=5)]
                    if ids[word] not in found:
                        misses[0] += 1
                    if word in memories:
                        kept = [h.memory.id for h in alice.search_memories(word, k=5)]
                        if memories[word] not in kept:
                            misses[0] += 1
                    answered[0] += 1
                except Exception:  # counted: the goal is none
                    errors[0] += 1
                samples.add(time.perf_counter_ns() - wall, time.process_time_ns() - cpu)

        def write() -> None:
            other = memory.scope("bench", "bob").create_conversation()
            while not stop.is_set():
                try:
                    other.append("user", f"bob's note {appended[0]} about the ferry timetable")
                    appended[0] += 1
                except Exception:
                    append_errors[0] += 1

        threads = [threading.Thread(target=search), threading.Thread(target=write)]
        cpu_started, wall_started = time.process_time(), time.perf_counter()
        for thread in threads:
            thread.start()
        try:
            changed = memory.embedder_switch.switch("bench", NEW, batch_size=128)
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
        switch_s = time.perf_counter() - wall_started
        cpu_s = time.process_time() - cpu_started
        memory.wait_for_vectors(600)
        with memory.store.read() as tx:
            left_old = len(tx.embedded_message_vectors(OLD.name, 0, 1_000_000))
            missing_new = len(tx.missing_message_vectors(NEW.name, 1_000_000))
    finally:
        memory.close()
    return {
        "turns": turns,
        "memories": len(memories),
        "searches_answered": answered[0],
        "search_errors": errors[0],
        "search_misses": misses[0],
        **{f"search_{k}": v for k, v in samples.figures().items()},
        "search_max_ms": round(max(samples.wall_ms), 3) if samples.wall_ms else None,
        "appends_during_switch": appended[0],
        "append_errors": append_errors[0],
        "switch_wall_s": round(switch_s, 2),
        "cpu_s": round(cpu_s, 2),
        "rows_changed": changed,
        "old_vectors_left": left_old,
        "turns_without_new_vector": missing_new,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--database", help="a database URL (default: a fresh SQLite file)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load_before = load_average()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database or f"sqlite:///{Path(folder) / 'switch.db'}"
        result = run(url, args.turns)
    result = {"backend": url.split(":", 1)[0], "load_before": load_before,
              "load_after": load_average(), **result}  # fmt: skip
    text = json.dumps(result, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
