"""Several processes and threads writing one SQLite file: nothing surfaces, nothing is lost, and
the message table holds one chain. (Moved from ``tests/test_concurrency.py``; every backend:
``src/convmem/testing/contract/test_concurrency.py``.)"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from collections import Counter
from pathlib import Path

import convmem

PROCESSES = 4
APPENDS = 300


def _append_many(path: str, conversation_id: str, worker: int, count: int) -> None:
    with convmem.open(path) as mem:
        conv = mem.scope("acme", "alice").conversation(conversation_id)
        for i in range(count):
            conv.append("user", f"worker {worker} message {i}", metadata={"w": worker, "i": i})


def _assert_one_linear_chain(conv: convmem.Conversation, db_path: Path, expected: int) -> None:
    branch = conv.branch()
    assert len(branch) == expected
    assert [m.depth for m in branch] == list(range(expected))
    assert Counter((m.metadata["w"], m.metadata["i"]) for m in branch).most_common(1)[0][1] == 1
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == expected
        forks = db.execute(
            "SELECT count(*) FROM (SELECT parent_id FROM messages GROUP BY parent_id "
            "HAVING count(*) > 1)"
        ).fetchone()[0]
    assert forks == 0


def test_four_processes_append_to_one_conversation(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_append_many, args=(str(db_path), conv.id, w, APPENDS))
        for w in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").conversation(conv.id)
        _assert_one_linear_chain(conv, db_path, PROCESSES * APPENDS)
        per_worker = Counter(m.metadata["w"] for m in conv.branch())
        assert per_worker == dict.fromkeys(range(PROCESSES), APPENDS)


def test_threads_share_one_memory(db_path: Path) -> None:
    errors: list[BaseException] = []
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()

        def run(worker: int) -> None:
            try:
                for i in range(100):
                    conv.append("user", f"t{worker} {i}", metadata={"w": worker, "i": i})
                    conv.assemble("next?")
            except BaseException as exc:  # collected: a thread's exception would vanish
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        _assert_one_linear_chain(conv, db_path, 400)
