"""Derived data: summaries, the job queue that builds them, and each conversation's last
assembled request. All of it can be dropped and rebuilt from messages.

**Summaries** are keyed by (through-message, summarizer, prompt version): a key is written once.
They go when their through-message goes (see ``ConversationWrites.delete_messages``).

**The job queue** is shared by every worker process. Its lease semantics:

- ``enqueue_job`` is idempotent by (tenant, key).
- ``claim_job`` hands the oldest ready job (by ``run_after``, then creation, then id) of the given
  kinds to one owner, atomically: a pending job whose ``run_after`` has come, or a running job
  whose lease expired (its worker crashed or hung). Claiming sets it running, counts an attempt
  and leases it until ``now + lease_seconds``. Two concurrent claims never get the same job — a
  backend with row locks skips rows another claimer holds (``FOR UPDATE SKIP LOCKED``).
- ``extend_lease``, ``finish_job`` and ``fail_job`` act only while ``owner`` still holds the
  running job: once its lease expired and someone else claimed it, they change nothing
  (``extend_lease`` and ``finish_job`` return False).
- ``fail_job`` puts the job back to pending until ``retry_at``, or with None marks it failed.
- ``retry_job`` puts a failed or finished job back with fresh attempts (an operator's action).
- Times are seconds since the epoch (``time.time()``), passed in so tests control them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from convmem.model.admitted import Admitted
from convmem.model.keys import AssemblyRecord
from convmem.model.summary import Job, SummaryRecord


class SummaryReads(Protocol):
    def summary_through(
        self, tenant: str, message_id: str, summarizer: str, prompt_version: str
    ) -> SummaryRecord | None: ...

    def summaries_above(
        self,
        tenant: str,
        conversation_id: str,
        summarizer: str,
        prompt_version: str,
        *,
        below_depth: int,
        limit: int,
    ) -> list[SummaryRecord]:
        """The conversation's summaries above a depth, deepest first (ancestor candidates)."""
        ...

    def conversation_summaries(self, tenant: str, conversation_id: str) -> list[SummaryRecord]:
        """Every summary of the conversation, shallowest first."""
        ...


class SummaryWrites(Protocol):
    def insert_summary(self, tenant: str, user: str, admitted: Admitted[SummaryRecord]) -> bool:
        """Store a summary the never-store gate admitted; False when a summary with the same
        key exists already (it is kept)."""
        ...

    def delete_summary(self, tenant: str, summary_id: str) -> None: ...


class JobReads(Protocol):
    def find_job(self, tenant: str, key: str) -> Job | None: ...

    def get_job(self, job_id: str) -> Job:
        """Any tenant's job by id (an operator's and a worker's view); ``NotFound`` if none."""
        ...

    def list_jobs(self, status: str | None, limit: int) -> list[Job]:
        """Every tenant's jobs, newest first, optionally of one status."""
        ...


class JobWrites(Protocol):
    def enqueue_job(self, job: Job) -> bool:
        """False when a job with the same key exists already: enqueueing is idempotent."""
        ...

    def claim_job(
        self, owner: str, now: float, lease_seconds: float, kinds: Sequence[str]
    ) -> Job | None:
        """The oldest ready job of ``kinds``, leased to ``owner`` (see the module docstring)."""
        ...

    def extend_lease(self, job_id: str, owner: str, until: float) -> bool:
        """Move the lease's end to ``until``; False if ``owner`` no longer holds the job."""
        ...

    def finish_job(self, job_id: str, owner: str, note: str | None = None) -> bool:
        """Mark the job done (``note`` kept as its last message); False if ``owner`` no longer
        holds it — its work must then be treated as not done."""
        ...

    def fail_job(self, job_id: str, owner: str, error: str, retry_at: float | None) -> None:
        """Pending again from ``retry_at``; with None (attempts used up) it stays failed."""
        ...

    def retry_job(self, job_id: str, now: float) -> None:
        """A failed or done job pending again with no attempts counted; ``NotFound`` if none."""
        ...


class AssemblyReads(Protocol):
    def last_assembly(
        self, tenant: str, user: str, conversation_id: str
    ) -> AssemblyRecord | None: ...


class AssemblyWrites(Protocol):
    def put_last_assembly(self, tenant: str, user: str, record: AssemblyRecord) -> None:
        """Replace the conversation's last assembled request."""
        ...
