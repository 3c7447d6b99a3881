"""Summaries and the job queue, for both SQL backends (mixed into the backend's transaction).

The queue is one table across tenants. A claim is one ``UPDATE … RETURNING`` of the oldest ready
job; where the backend has row locks it skips the jobs other workers hold (``FOR UPDATE SKIP
LOCKED``), so several workers each take a different job without waiting on each other. A job
whose worker's lease ran out is claimed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.summary import Job, SummaryRecord
from convmem.store.rows import JOB_COLUMNS, SUMMARY_COLUMNS, job_from_row, summary_from_row
from convmem.store.sql.txn import SqlTxn

# The path from a message towards the root, at most ``limit`` messages, as (id, n) with n = 0 at
# the start. Parameters: start id, tenant, limit.
CHAIN_CTE = """
    WITH RECURSIVE chain(id, n) AS (
        SELECT CAST(? AS TEXT), 0
        UNION ALL
        SELECT m.parent_id, chain.n + 1 FROM chain
        JOIN messages m ON m.tenant_id = ? AND m.id = chain.id
        WHERE m.parent_id IS NOT NULL AND chain.n + 1 < ?
    )
"""


class DerivedRows(SqlTxn):
    def _now(self) -> Any:
        return self._d.iso(datetime.now(UTC))

    # --- summaries ------------------------------------------------------------------------------

    def summary_through(
        self, tenant: str, message_id: str, summarizer: str, prompt_version: str
    ) -> SummaryRecord | None:
        row = self._run(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND through_message_id = ? AND summarizer = ? AND prompt_version = ?",
            (tenant, message_id, summarizer, prompt_version),
        ).fetchone()
        return summary_from_row(row, self._d.codec) if row else None

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
        rows = self._run(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND conversation_id = ? AND summarizer = ? AND prompt_version = ? "
            "AND through_depth < ? ORDER BY through_depth DESC, id DESC LIMIT ?",
            (tenant, conversation_id, summarizer, prompt_version, below_depth, limit),
        ).fetchall()
        return [summary_from_row(row, self._d.codec) for row in rows]

    def conversation_summaries(self, tenant: str, conversation_id: str) -> list[SummaryRecord]:
        rows = self._run(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND conversation_id = ? ORDER BY through_depth, id",
            (tenant, conversation_id),
        ).fetchall()
        return [summary_from_row(row, self._d.codec) for row in rows]

    def path_ids(self, tenant: str, message_id: str, count: int) -> list[str]:
        rows = self._run(
            CHAIN_CTE
            + "SELECT chain.id FROM chain JOIN messages m ON m.tenant_id = ? AND m.id = chain.id "
            "ORDER BY chain.n",
            (message_id, tenant, count, tenant),
        ).fetchall()
        return [row[0] for row in rows]

    def insert_summary(self, tenant: str, user: str, admitted: Admitted[SummaryRecord]) -> bool:
        record, d = admitted.value, self._d
        cursor = self._run(
            f"INSERT INTO summaries (tenant_id, user_id, {SUMMARY_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                tenant, user, record.id, record.conversation_id, record.through_message_id,
                record.through_depth, record.covered_hash, record.base_hash,
                record.segment_length, record.previous_id, record.summarizer,
                record.prompt_version, d.json(record.snapshot.to_dict()), record.rendered,
                record.tokens, d.json(record.cost.to_dict()), record.fallback_reason,
                d.iso(record.created_at or datetime.now(UTC)),
            ),
        )  # fmt: skip
        return self._changed(cursor) == 1

    def delete_summary(self, tenant: str, summary_id: str) -> None:
        self._run("DELETE FROM summaries WHERE tenant_id = ? AND id = ?", (tenant, summary_id))

    # --- jobs -----------------------------------------------------------------------------------

    def find_job(self, tenant: str, key: str) -> Job | None:
        row = self._run(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE tenant_id = ? AND key = ?", (tenant, key)
        ).fetchone()
        return job_from_row(row, self._d.codec) if row else None

    def get_job(self, job_id: str) -> Job:
        row = self._run(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise NotFound("job", job_id)
        return job_from_row(row, self._d.codec)

    def list_jobs(self, status: str | None, limit: int) -> list[Job]:
        where = "" if status is None else "WHERE status = ? "
        params: tuple[Any, ...] = (limit,) if status is None else (status, limit)
        rows = self._run(
            f"SELECT {JOB_COLUMNS} FROM jobs {where}ORDER BY created_at DESC, id DESC LIMIT ?",
            params,
        ).fetchall()
        return [job_from_row(row, self._d.codec) for row in rows]

    def enqueue_job(self, job: Job) -> bool:
        d = self._d
        cursor = self._run(
            f"INSERT INTO jobs ({JOB_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                job.id, job.tenant_id, job.kind, job.key, job.conversation_id,
                d.json(dict(job.payload)), job.status, job.attempts, job.max_attempts,
                job.lease_owner, job.lease_expires_at, job.run_after, job.last_error,
                d.iso(job.created_at), d.iso(job.updated_at),
            ),
        )  # fmt: skip
        return self._changed(cursor) == 1

    def claim_job(
        self, owner: str, now: float, lease_seconds: float, kinds: Sequence[str]
    ) -> Job | None:
        """The oldest ready job, leased to ``owner``: a pending one whose time has come, or a
        running one whose worker's lease ran out. Jobs other workers hold are skipped."""
        row = self._returned(
            f"""
            UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?,
                lease_expires_at = ?, updated_at = ?
            WHERE (tenant_id, id) = (
                SELECT tenant_id, id FROM jobs WHERE kind {self._d.one_of} AND (
                    (status = 'pending' AND run_after <= ?)
                    OR (status = 'running' AND lease_expires_at <= ?))
                ORDER BY run_after, created_at, id LIMIT 1{self._d.skip_locked}
            )
            RETURNING {JOB_COLUMNS}
            """,
            (owner, now + lease_seconds, self._now(), self._d.ids(kinds), now, now),
        )
        return job_from_row(row, self._d.codec) if row else None

    def extend_lease(self, job_id: str, owner: str, until: float) -> bool:
        cursor = self._run(
            "UPDATE jobs SET lease_expires_at = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            (until, self._now(), job_id, owner),
        )
        return self._changed(cursor) == 1

    def finish_job(self, job_id: str, owner: str, note: str | None = None) -> bool:
        cursor = self._run(
            "UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, "
            "last_error = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            (note, self._now(), job_id, owner),
        )
        return self._changed(cursor) == 1

    def fail_job(self, job_id: str, owner: str, error: str, retry_at: float | None) -> None:
        """Back to pending until ``retry_at``; with None (attempts used up) it stays failed."""
        self._run(
            "UPDATE jobs SET status = ?, run_after = COALESCE(?, run_after), "
            "lease_owner = NULL, lease_expires_at = NULL, last_error = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            ("failed" if retry_at is None else "pending", retry_at, error, self._now(), job_id,
             owner),
        )  # fmt: skip

    def retry_job(self, job_id: str, now: float) -> None:
        cursor = self._run(
            "UPDATE jobs SET status = 'pending', attempts = 0, run_after = ?, lease_owner = NULL, "
            "lease_expires_at = NULL, updated_at = ? "
            "WHERE id = ? AND status IN ('failed', 'done')",
            (now, self._now(), job_id),
        )
        if self._changed(cursor) == 0:
            raise NotFound("failed or finished job", job_id)
