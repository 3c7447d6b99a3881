"""The job queue's lease semantics, through the store's write transactions.

A job is claimed by one worker at a time under a lease; a lease that runs out lets another
worker claim the job again (the first one crashed or hung) and takes the job from its former
owner; the owner can extend a lease it still holds; finishing and failing need the lease; a
failure with a retry time puts the job back after that time, one without fails it for good;
enqueueing a key twice is a no-op. Times are the caller's clock (unix seconds), so these tests
move time by passing it, never by waiting.
"""

from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event

import convmem
from convmem.ids import new_id
from convmem.testing.harness import Backend

KIND = "contract/test"
T0 = 1_700_000_000.0
LEASE = 30.0


def job(key: str, *, kind: str = KIND, tenant: str = "acme", run_after: float = T0) -> convmem.Job:
    now = datetime.now(UTC)
    return convmem.Job(
        id=new_id("job"), tenant_id=tenant, kind=kind, key=key, conversation_id=None,
        payload={"n": key}, status="pending", attempts=0, max_attempts=3, lease_owner=None,
        lease_expires_at=None, run_after=run_after, last_error=None, created_at=now,
        updated_at=now,
    )  # fmt: skip


def claim(
    memory: convmem.Memory, owner: str, at: float, kinds: tuple[str, ...] = (KIND,)
) -> convmem.Job | None:
    with memory.store.write() as tx:
        return tx.claim_job(owner, at, LEASE, list(kinds))


def get(memory: convmem.Memory, job_id: str) -> convmem.Job:
    with memory.store.read() as tx:
        return tx.get_job(job_id)


def enqueue(memory: convmem.Memory, *jobs: convmem.Job) -> list[bool]:
    with memory.store.write() as tx:
        return [tx.enqueue_job(j) for j in jobs]


def test_enqueueing_a_key_again_is_a_no_op(memory: convmem.Memory) -> None:
    first = job("k1")
    assert enqueue(memory, first) == [True]
    assert enqueue(memory, job("k1")) == [False]  # another id, the same key
    with memory.store.read() as tx:
        found = tx.find_job("acme", "k1")
        assert found is not None and found.id == first.id
        assert tx.find_job("globex", "k1") is None  # keys are per tenant
    assert enqueue(memory, job("k1", tenant="globex")) == [True]
    assert len(memory.jobs()) == 2


def test_a_claim_leases_the_oldest_ready_job_of_the_workers_kinds(memory: convmem.Memory) -> None:
    later = job("later", run_after=T0 + 100)
    other_kind = job("other", kind="contract/other")
    ready = job("ready", run_after=T0 - 5)
    enqueue(memory, later, other_kind, ready)
    claimed = claim(memory, "w1", T0)
    assert claimed is not None and claimed.id == ready.id
    assert (claimed.status, claimed.attempts, claimed.lease_owner) == ("running", 1, "w1")
    assert claimed.lease_expires_at == T0 + LEASE
    assert claim(memory, "w2", T0) is None  # "later" is not due, "other" is not w2's kind
    assert get(memory, later.id).status == "pending"
    with memory.store.write() as tx:  # else its lease, run out by then, would be claimed first
        assert tx.finish_job(ready.id, "w1") is True
    due = claim(memory, "w2", T0 + 100)
    assert due is not None and due.id == later.id
    mine = claim(memory, "w3", T0, kinds=("contract/other",))
    assert mine is not None and mine.id == other_kind.id


def test_an_expired_lease_lets_another_worker_claim_and_takes_the_job_from_the_first(
    memory: convmem.Memory,
) -> None:
    queued = job("k")
    enqueue(memory, queued)
    assert claim(memory, "w1", T0) is not None
    assert claim(memory, "w2", T0 + LEASE - 1) is None  # still leased to w1
    again = claim(memory, "w2", T0 + LEASE)
    assert again is not None and again.id == queued.id
    assert (again.lease_owner, again.attempts) == ("w2", 2)
    with memory.store.write() as tx:  # w1 lost it: it can neither extend, finish nor fail it
        assert tx.extend_lease(queued.id, "w1", T0 + 1000) is False
        assert tx.finish_job(queued.id, "w1") is False
        tx.fail_job(queued.id, "w1", "late", None)
    current = get(memory, queued.id)
    assert (current.status, current.lease_owner, current.last_error) == ("running", "w2", None)


def test_the_owner_extends_its_lease(memory: convmem.Memory) -> None:
    queued = job("k")
    enqueue(memory, queued)
    assert claim(memory, "w1", T0) is not None
    with memory.store.write() as tx:
        assert tx.extend_lease(queued.id, "w1", T0 + 100) is True
    assert get(memory, queued.id).lease_expires_at == T0 + 100
    assert claim(memory, "w2", T0 + LEASE + 1) is None  # the old expiry no longer counts
    assert claim(memory, "w2", T0 + 100) is not None


def test_finish_and_fail_need_the_lease_and_set_the_status(memory: convmem.Memory) -> None:
    done, retried, failed = job("done"), job("retried"), job("failed")
    enqueue(memory, done, retried, failed)
    for owner in ("w1", "w2", "w3"):
        assert claim(memory, owner, T0) is not None
    owners = {get(memory, j.id).lease_owner: j.id for j in (done, retried, failed)}
    done_id, retried_id, failed_id = owners["w1"], owners["w2"], owners["w3"]
    with memory.store.write() as tx:
        assert tx.finish_job(done_id, "w1", "note") is True
        assert tx.finish_job(done_id, "w1") is False  # once
        tx.fail_job(retried_id, "w2", "TimeoutError", T0 + 60)
        tx.fail_job(failed_id, "w3", "attempts used up", None)
    finished = get(memory, done_id)
    assert (finished.status, finished.lease_owner, finished.last_error) == ("done", None, "note")
    back = get(memory, retried_id)
    assert (back.status, back.run_after, back.last_error) == ("pending", T0 + 60, "TimeoutError")
    assert back.lease_owner is None
    assert get(memory, failed_id).status == "failed"
    assert claim(memory, "w4", T0 + 59) is None  # not before its retry time
    retry = claim(memory, "w4", T0 + 60)
    assert retry is not None and retry.id == retried_id and retry.attempts == 2
    with memory.store.write() as tx:
        assert tx.finish_job(retried_id, "w4") is True
    assert claim(memory, "w5", T0 + 10_000) is None  # done and failed jobs are never claimed
    with memory.store.write() as tx:
        tx.retry_job(failed_id, T0 + 10_000)  # an operator puts it back with fresh attempts
    revived = claim(memory, "w5", T0 + 10_000)
    assert revived is not None and revived.id == failed_id and revived.attempts == 1


def _claim_all(url: str, owner: str, go: Event, found: Queue[tuple[str, str | None]]) -> None:
    with convmem.open(url) as memory:
        go.wait(timeout=60)  # every worker starts claiming at once
        while (claimed := claim(memory, owner, T0)) is not None:
            found.put((owner, claimed.id))
            with memory.store.write() as tx:  # a worker's next transaction: the lease holds
                assert tx.finish_job(claimed.id, owner)
    found.put((owner, None))


def test_concurrent_workers_never_claim_one_job_twice(backend: Backend) -> None:
    with backend.open() as memory:
        queued = [job(f"k{i}") for i in range(200)]
        enqueue(memory, *queued)
    context = multiprocessing.get_context("fork")
    go = context.Event()
    found: Queue[tuple[str, str | None]] = context.Queue()
    workers = [
        context.Process(target=_claim_all, args=(backend.url, f"w{n}", go, found)) for n in range(4)
    ]
    for worker in workers:
        worker.start()
    go.set()
    claims: list[tuple[str, str]] = []
    finished = 0
    while finished < len(workers):
        owner, job_id = found.get(timeout=120)
        if job_id is None:
            finished += 1
        else:
            claims.append((owner, job_id))
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * len(workers)
    assert sorted(job_id for _, job_id in claims) == sorted(j.id for j in queued)
    with backend.open() as memory:
        for _, job_id in claims:
            held = get(memory, job_id)
            assert (held.status, held.attempts) == ("done", 1)
