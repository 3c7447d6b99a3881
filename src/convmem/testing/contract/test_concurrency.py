"""Concurrent appends from real processes: appends to one conversation serialise into one chain,
every acknowledged write is kept, and appends to different conversations all go through."""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event

import convmem
from convmem.testing.harness import Backend

APPENDS = 60


def _append_many(
    url: str,
    conversation_id: str,
    worker: int,
    go: Event,
    acknowledged: Queue[tuple[int, str | None]],
) -> None:
    with convmem.open(url) as memory:
        conv = memory.scope("acme", "alice").conversation(conversation_id)
        go.wait(timeout=60)  # every process starts appending at once
        for i in range(APPENDS):
            stored = conv.append(
                "user", f"worker {worker} message {i}", metadata={"w": worker, "i": i}
            )
            acknowledged.put((worker, stored.id))
    acknowledged.put((worker, None))


def run_appenders(backend: Backend, targets: list[str]) -> dict[int, list[str]]:
    """One process per target conversation id, all appending at once; the ids each was given."""
    context = multiprocessing.get_context("fork")
    go = context.Event()
    acknowledged: Queue[tuple[int, str | None]] = context.Queue()
    workers = [
        context.Process(target=_append_many, args=(backend.url, target, n, go, acknowledged))
        for n, target in enumerate(targets)
    ]
    for worker in workers:
        worker.start()
    go.set()
    given: dict[int, list[str]] = {n: [] for n in range(len(targets))}
    finished = 0
    while finished < len(workers):
        worker_n, message_id = acknowledged.get(timeout=300)
        if message_id is None:
            finished += 1
        else:
            given[worker_n].append(message_id)
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * len(workers)
    return given


def assert_one_chain(conv: convmem.Conversation, acknowledged: list[str]) -> list[convmem.Message]:
    """Every message of the conversation on one linear branch, parent links and depths
    consistent, the active leaf at its end, and every acknowledged id on it exactly once."""
    branch = conv.branch()
    assert len(branch) == len(acknowledged)
    assert Counter(m.id for m in branch) == Counter(acknowledged)
    assert [m.depth for m in branch] == list(range(len(branch)))
    assert [m.parent_id for m in branch] == [None, *(m.id for m in branch[:-1])]
    assert len(conv.messages()) == len(branch)  # no message off the chain: no fork
    assert conv.record().active_leaf_id == branch[-1].id
    # each process's own appends keep their order
    for worker in {m.metadata["w"] for m in branch}:
        mine = [m.metadata["i"] for m in branch if m.metadata["w"] == worker]
        assert mine == sorted(mine)
    return branch


def test_processes_appending_to_one_conversation_make_one_chain(backend: Backend) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
    given = run_appenders(backend, [conv.id] * 4)
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").conversation(conv.id)
        branch = assert_one_chain(conv, [i for ids in given.values() for i in ids])
        assert Counter(m.metadata["w"] for m in branch) == dict.fromkeys(range(4), APPENDS)


def test_appends_to_different_conversations_all_go_through(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        one, two = alice.create_conversation(), alice.create_conversation()
    given = run_appenders(backend, [one.id, two.id, one.id, two.id])
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        for conv_id, workers in ((one.id, (0, 2)), (two.id, (1, 3))):
            branch = assert_one_chain(
                alice.conversation(conv_id), [i for w in workers for i in given[w]]
            )
            assert {m.conversation_id for m in branch} == {conv_id}
            assert Counter(m.metadata["w"] for m in branch) == dict.fromkeys(workers, APPENDS)


def test_threads_sharing_one_memory_make_one_chain(memory: convmem.Memory) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    given: dict[int, list[str]] = {w: [] for w in range(4)}
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            for i in range(25):
                stored = conv.append("user", f"t{worker} {i}", metadata={"w": worker, "i": i})
                given[worker].append(stored.id)
                conv.assemble("next?")
        except BaseException as exc:  # collected: a thread's exception would vanish
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in given]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_one_chain(conv, [i for ids in given.values() for i in ids])
