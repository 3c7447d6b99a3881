"""The background worker: builds summaries off the request path from the durable job table, and
embeds what was written without vectors.

A job is claimed with a lease that a heartbeat keeps extending while the job runs. A worker that
crashes or hangs stops extending it; once it runs out, the next worker claims the job again
(attempts are counted, and a job that used them all stays ``failed``, visible in
``convmem jobs list``). Writing a summary is idempotent (one per key), so a job that is run twice
— a lease lost to a slow model — does no harm.

With an embedder on the memory, the worker also embeds, a batch at a time between jobs, the turns,
words and memories that have no vector yet (written with ``embed_on_write`` off, or before a
model change): vectors are derived data, so several workers doing it at once only repeat work.
A worker whose embedder is the target of a tenant's embedder switch builds its vectors too
(``build_switches``).

Every ``retention_seconds`` (an hour by default) it queues one retention sweep job per tenant
with a period (``convmem.domain.retention``), keyed by the tenant and the hour so several workers
queue it once, and runs them: a sweep is a job like any other — its state, attempts and retries in
``convmem jobs list``, its counts per layer as the job's note — and idempotent, so a sweep
that failed half way runs again from where it stopped. ``clock`` gives the sweeps their time
(tests pass their own).

Every ``consolidate_seconds`` it reads the user turns stored since its last look (across
tenants) and queues a consolidation job (``convmem.consolidate.run``) for each user who stated
something about themselves — or for every user who wrote, when a model (``extractor``) proposes
candidates too. Consolidation only ever writes proposals: the user confirms.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from convmem.consolidate.llm import LLMExtractor
from convmem.consolidate.run import (
    CONSOLIDATION_ACTOR,
    ConsolidationSettings,
    consolidate_user,
    statements_of,
)
from convmem.domain.retention import sweep_tenant
from convmem.domain.summaries import SummaryFlow, admitted_chain, job_kind
from convmem.engine import Memory
from convmem.errors import NotFound
from convmem.ids import floor_id, new_id
from convmem.model.principal import Principal
from convmem.model.summary import Job
from convmem.ops.metrics import ProcessMetrics
from convmem.store.base import WriteTxn
from convmem.store.retry import write_retried
from convmem.summarize.base import Summarizer
from convmem.summarize.extractive import ExtractiveSummarizer
from convmem.summarize.rolling import ChainStart, build_chain

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 300.0
RETENTION_JOB = "retention.sweep"
BACKGROUND_ATTEMPTS = 5
CONSOLIDATE_JOB = "memory.consolidate"
_SCAN = 5000  # user turns looked at per consolidation pass


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Worker:
    """Runs summary jobs for the summarizers it was given (default: the memory's, and the
    extractive one for runs too long to build inline)."""

    def __init__(
        self,
        memory: Memory,
        summarizers: Sequence[Summarizer] | None = None,
        *,
        lease_seconds: float = 120.0,
        owner: str | None = None,
        retention_seconds: float = 3600.0,
        metrics: ProcessMetrics | None = None,
        clock: Callable[[], datetime] = _utc_now,
        consolidation: ConsolidationSettings | None = None,
        consolidate_seconds: float = 3600.0,
        extractor: LLMExtractor | None = None,
    ) -> None:
        """``metrics``: where jobs, failures and retention passes are counted (a registry of
        the worker's own by default; ``convmem worker --metrics-port`` serves it). ``clock``:
        the time retention sweeps and consolidation apply their periods at. ``consolidation``:
        its settings (the defaults when None); ``extractor``: a model proposing candidate
        memories from new turns."""
        if min(lease_seconds, retention_seconds, consolidate_seconds) <= 0:
            raise ValueError("lease, retention and consolidation periods must be positive")
        self.consolidation = consolidation or ConsolidationSettings()
        self.consolidate_seconds = consolidate_seconds
        self._consolidate_due = 0.0
        self.extractor = extractor
        lookback = timedelta(days=self.consolidation.lookback_days)
        # the newest user turn looked at: a new worker looks back over the whole lookback
        self._scanned = floor_id("msg", int((clock() - lookback).timestamp() * 1000))
        self.retention_seconds = retention_seconds
        self.clock = clock
        self._retention_due = 0.0  # monotonic time of the next pass: the first loop runs one
        self.memory = memory
        self.metrics = metrics or ProcessMetrics()
        self.metrics.watch_queue(memory.store)
        chosen = list(summarizers or [memory.summarizer])
        if not any(isinstance(s, ExtractiveSummarizer) for s in chosen):
            chosen.append(ExtractiveSummarizer())
        config = memory.config
        self.flows = {
            job_kind(s): SummaryFlow(
                s,
                max_inline=config.max_inline_summary_messages,
                segment=config.summary_segment_messages,
                job_attempts=config.summary_job_attempts,
            )
            for s in chosen
        }
        handlers: dict[str, Callable[[Job], str | None]] = dict.fromkeys(
            self.flows, self._summarize
        )
        self._handlers = handlers
        self._handlers[RETENTION_JOB] = self._sweep
        self._handlers[CONSOLIDATE_JOB] = self._consolidate
        self._swept: dict[str, dict[str, int]] = {}  # a sweep job's counts, until reported
        self.lease_seconds = lease_seconds
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{new_id('w')[-6:]}"

    @property
    def kinds(self) -> list[str]:
        """The job kinds this worker runs."""
        return list(self._handlers)

    def run_once(self, kinds: Sequence[str] | None = None) -> Job | None:
        """Claim and run one ready job (of ``kinds``, default every kind this worker runs);
        None when none is ready."""
        store = self.memory.store
        wanted = list(kinds or self._handlers)
        job = write_retried(
            store, lambda tx: tx.claim_job(self.owner, time.time(), self.lease_seconds, wanted)
        )
        if job is None:
            return None
        log.info("job %s claimed (attempt %d of %d)", job.id, job.attempts, job.max_attempts)
        if job.attempts > job.max_attempts:
            write_retried(
                store, lambda tx: tx.fail_job(job.id, self.owner, "attempts used up", None)
            )
            log.warning("job %s failed: attempts used up", job.id)
            self.metrics.job_ran(job.kind, "failed", "AttemptsUsedUp")
            return job
        beating = threading.Event()
        heart = threading.Thread(target=self._heartbeat, args=(job, beating), daemon=True)
        heart.start()
        try:
            note = self._handlers[job.kind](job)
        except Exception as exc:  # a job must never take the worker down; the reason is kept
            reason = type(exc).__name__
            retry_at = None
            if job.attempts < job.max_attempts:
                retry_at = time.time() + min(MAX_BACKOFF_SECONDS, 2.0**job.attempts)
            write_retried(store, lambda tx: tx.fail_job(job.id, self.owner, reason, retry_at))
            log.warning("job %s attempt %d failed: %s", job.id, job.attempts, reason)
            self.metrics.job_ran(job.kind, "retry" if retry_at else "failed", reason)
        else:
            if not write_retried(store, lambda tx: tx.finish_job(job.id, self.owner, note)):
                log.warning("job %s finished after its lease was lost", job.id)
            self.metrics.job_ran(job.kind, "done")
            log.info("job %s done%s", job.id, f" ({note})" if note else "")
        finally:
            beating.set()
            heart.join()
        return job

    def run(
        self,
        *,
        stop: threading.Event | None = None,
        poll_seconds: float = 1.0,
        max_jobs: int | None = None,
        exit_when_idle: bool = False,
    ) -> int:
        """Run jobs until ``stop`` is set, ``max_jobs`` ran, or (``exit_when_idle``) none is
        ready. Returns how many ran."""
        stop = stop or threading.Event()
        done = 0
        while not stop.is_set() and (max_jobs is None or done < max_jobs):
            self.apply_retention_if_due()
            self.queue_consolidation_if_due()
            if self.run_once() is None:
                if self.embed_pending():
                    continue
                if exit_when_idle:
                    break
                stop.wait(poll_seconds)
                continue
            done += 1
        return done

    def apply_retention_if_due(self) -> dict[str, int] | None:
        """When the last pass is ``retention_seconds`` old: queue a sweep job per tenant with a
        retention period and run the ready sweeps. The conversations deleted per tenant
        swept, or None when not due."""
        if time.monotonic() < self._retention_due:
            return None
        self._retention_due = time.monotonic() + self.retention_seconds
        self.queue_retention()
        deleted: dict[str, int] = {}
        layers: dict[str, int] = {}
        while (job := self.run_once([RETENTION_JOB])) is not None:
            counts = self._swept.pop(job.id, {})
            if "transcripts" in counts:
                deleted[job.tenant_id] = deleted.get(job.tenant_id, 0) + counts["transcripts"]
            for layer, count in counts.items():
                layers[layer] = layers.get(layer, 0) + count
        self.metrics.retention_swept(sum(deleted.values()), layers)
        if any(layers.values()):
            log.info("retention deleted %s", ", ".join(f"{n} {k}" for k, n in layers.items()))
        return deleted

    def queue_retention(self) -> int:
        """Queue this period's sweep job for every tenant with a retention period (once per
        tenant and period, whichever worker does it); how many were new."""
        store = self.memory.store
        with store.read() as tx:
            tenants = [p.tenant_id for p in tx.tenant_policies()]
        slot = int(time.time() // self.retention_seconds)
        queued = 0
        for tenant in tenants:
            job = Job(
                id=new_id("job"), tenant_id=tenant, kind=RETENTION_JOB,
                key=f"retention:{slot}", conversation_id=None, payload={}, status="pending",
                attempts=0, max_attempts=BACKGROUND_ATTEMPTS, lease_owner=None,
                lease_expires_at=None, run_after=time.time(), last_error=None,
                created_at=_utc_now(), updated_at=_utc_now(),
            )  # fmt: skip
            queued += write_retried(store, _enqueue, job)
        return queued

    def _sweep(self, job: Job) -> str:
        """Run a tenant's sweep under its policy as it is now; the counts are the job's note."""
        with self.memory.store.read() as tx:
            policy = tx.tenant_policy(job.tenant_id)
        counts = sweep_tenant(self.memory.store, policy, self.clock())
        self._swept[job.id] = counts
        return json.dumps(counts, sort_keys=True)

    def queue_consolidation_if_due(self) -> int | None:
        """When the last look is ``consolidate_seconds`` old, queue consolidation jobs (see
        ``queue_consolidation``); how many, or None when not due."""
        if time.monotonic() < self._consolidate_due:
            return None
        self._consolidate_due = time.monotonic() + self.consolidate_seconds
        return self.queue_consolidation()

    def queue_consolidation(self) -> int:
        """Queue a consolidation job for every user whose turns stored since the last look
        state something about themselves (every user who wrote, with an extractor); how many
        were queued. Turns are looked at once per worker process; each job reads the user's
        whole lookback again, so a job lost with its worker is made up by the next one."""
        store = self.memory.store
        queued = 0
        while True:
            after = self._scanned
            with store.read() as tx:
                writers = tx.recent_writers(after, _SCAN)
                wanted = [
                    w for w in writers if self.extractor is not None or statements_of(
                        tx.user_turns_after(w.tenant_id, w.user_id, after, _SCAN)
                    )
                ]  # fmt: skip
            for writer in wanted:
                job = Job(
                    id=new_id("job"), tenant_id=writer.tenant_id, kind=CONSOLIDATE_JOB,
                    key=f"consolidate:{writer.user_id}:{writer.last_message_id}",
                    conversation_id=None, payload={"user_id": writer.user_id, "after": after},
                    status="pending", attempts=0, max_attempts=BACKGROUND_ATTEMPTS,
                    lease_owner=None, lease_expires_at=None, run_after=time.time(),
                    last_error=None, created_at=_utc_now(), updated_at=_utc_now(),
                )  # fmt: skip
                queued += write_retried(store, _enqueue, job)
            if not writers:
                return queued
            self._scanned = max(w.last_message_id for w in writers)

    def _consolidate(self, job: Job) -> str:
        who = Principal(job.tenant_id, str(job.payload["user_id"]), CONSOLIDATION_ACTOR)
        after = job.payload.get("after")
        report = consolidate_user(
            self.memory.store, who, self.clock(), self.consolidation, extractor=self.extractor,
            extract_after=str(after) if after else None,
        )  # fmt: skip
        return json.dumps(report.to_dict(), sort_keys=True)

    def embed_pending(self, batch_size: int = 256) -> int:
        """Embed one batch of each kind of row still lacking a vector; how many were embedded
        (0 without an embedder, or when nothing is pending)."""
        counts = self.memory.backfill_embeddings(batch_size=batch_size, max_batches=1)
        embedded = sum(counts.values()) + self.build_switches(batch_size)
        if embedded:
            log.info(
                "embedded %d turns, %d words, %d memories",
                counts["messages"], counts["terms"], counts["memories"],
            )  # fmt: skip
        return embedded

    def build_switches(self, batch_size: int = 256) -> int:
        """One batch of each kind for every tenant whose embedder switch targets this worker's
        embedder (``Memory.embedder_switch``): the new vectors are built in the background; the
        operator's ``convmem embedder switch`` then finds the build done and switches. Rows
        embedded."""
        embedder = self.memory.embedder
        if embedder is None:
            return 0
        with self.memory.store.read() as tx:
            tenants = tx.switches_to(embedder.name)
        built = 0
        for tenant in tenants:
            counts = self.memory.embedder_switch.build(
                tenant, embedder, batch_size=batch_size, max_batches=1
            )
            built += sum(counts.values())
        if built:
            log.info("built %d vectors of %s for switches under way", built, embedder.name)
        return built

    def _heartbeat(self, job: Job, finished: threading.Event) -> None:
        interval = self.lease_seconds / 3
        while not finished.wait(interval):
            try:
                until = time.time() + self.lease_seconds
                if not write_retried(self.memory.store, _extend_lease, job.id, self.owner, until):
                    log.warning("job %s: lease lost to another worker", job.id)
                    return
            except Exception as exc:  # keep beating; the lease may still be saved
                log.warning("job %s: heartbeat failed: %s", job.id, type(exc).__name__)

    def _summarize(self, job: Job) -> str | None:
        flow = self.flows[job.kind]
        summarizer = flow.summarizer
        tenant, conversation = job.tenant_id, job.conversation_id or ""
        user = str(job.payload["user_id"])
        through = str(job.payload["through_message_id"])
        store = self.memory.store
        invalid: list[str] = []
        with store.read() as tx:
            try:
                tx.get_message(tenant, user, through)
            except NotFound:
                return "message deleted"
            existing = tx.summary_through(
                tenant, through, summarizer.name, summarizer.prompt_version
            )
            if existing is not None and flow.is_valid(tx, tenant, existing):
                return "already built"
            walk = flow.walk(tx, tenant, conversation, through, None, invalid)
        # the slow part (a model call per segment) runs outside any transaction
        records = build_chain(
            ChainStart(walk.ancestor),
            walk.turns,
            summarizer,
            conversation_id=conversation,
            max_segment=flow.segment,
            open_calls=walk.open_calls,
        )

        def keep(tx: WriteTxn) -> bool:
            try:
                tx.get_message(tenant, user, through)
            except NotFound:
                return False
            for summary_id in invalid:
                tx.delete_summary(tenant, summary_id)
            for admitted in admitted_chain(tx, tenant, user, records):
                tx.insert_summary(tenant, user, admitted)
            return True

        if not write_retried(store, keep):
            return "message deleted"
        fallbacks = [r.fallback_reason for r in records if r.fallback_reason]
        return f"fallback: {fallbacks[-1]}" if fallbacks else None


def _extend_lease(tx: WriteTxn, job_id: str, owner: str, until: float) -> bool:
    return tx.extend_lease(job_id, owner, until)


def _enqueue(tx: WriteTxn, job: Job) -> bool:
    return tx.enqueue_job(job)
