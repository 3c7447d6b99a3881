"""PostgreSQL rows for summaries and the job queue (mixed into ``PostgresTxn``).

The queue is one table across tenants. A worker claims with ``FOR UPDATE SKIP LOCKED``: several
workers (threads or processes) each take a different ready job without waiting on each other,
and a job whose worker's lease ran out is claimed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.summary import Job, SummaryRecord
from convmem.store.postgres.rows import CHAIN_CTE, TxnBase
from convmem.store.rows import DECODED, JOB_COLUMNS, SUMMARY_COLUMNS, job_from_row, summary_from_row


def _now() -> datetime:
    return datetime.now(UTC)


class DerivedRows(TxnBase):
    # --- summaries ------------------------------------------------------------------------------

    def summary_through(
        self, tenant: str, message_id: str, summarizer: str, prompt_version: str
    ) -> SummaryRecord | None:
        row = self._db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = %s "
            "AND through_message_id = %s AND summarizer = %s AND prompt_version = %s",
            (tenant, message_id, summarizer, prompt_version),
        ).fetchone()
        return summary_from_row(row, DECODED) if row else None

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
        rows = self._db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = %s "
            "AND conversation_id = %s AND summarizer = %s AND prompt_version = %s "
            "AND through_depth < %s ORDER BY through_depth DESC, id DESC LIMIT %s",
            (tenant, conversation_id, summarizer, prompt_version, below_depth, limit),
        ).fetchall()
        return [summary_from_row(row, DECODED) for row in rows]

    def conversation_summaries(self, tenant: str, conversation_id: str) -> list[SummaryRecord]:
        rows = self._db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = %s "
            "AND conversation_id = %s ORDER BY through_depth, id",
            (tenant, conversation_id),
        ).fetchall()
        return [summary_from_row(row, DECODED) for row in rows]

    def path_ids(self, tenant: str, message_id: str, count: int) -> list[str]:
        rows = self._db.execute(
            CHAIN_CTE
            + "SELECT chain.id FROM chain JOIN messages m ON m.tenant_id = %s AND m.id = chain.id "
            "ORDER BY chain.n",
            (message_id, tenant, count, tenant),
        ).fetchall()
        return [row[0] for row in rows]

    def insert_summary(self, tenant: str, user: str, admitted: Admitted[SummaryRecord]) -> bool:
        record = admitted.value
        cursor = self._db.execute(
            f"INSERT INTO summaries (tenant_id, user_id, {SUMMARY_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (
                tenant, user, record.id, record.conversation_id, record.through_message_id,
                record.through_depth, record.covered_hash, record.base_hash,
                record.segment_length, record.previous_id, record.summarizer,
                record.prompt_version, Jsonb(record.snapshot.to_dict()), record.rendered,
                record.tokens, Jsonb(record.cost.to_dict()), record.fallback_reason,
                record.created_at or _now(),
            ),
        )  # fmt: skip
        return self._changed(cursor) == 1

    def delete_summary(self, tenant: str, summary_id: str) -> None:
        self._db.execute(
            "DELETE FROM summaries WHERE tenant_id = %s AND id = %s", (tenant, summary_id)
        )

    # --- jobs -----------------------------------------------------------------------------------

    def find_job(self, tenant: str, key: str) -> Job | None:
        row = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE tenant_id = %s AND key = %s", (tenant, key)
        ).fetchone()
        return job_from_row(row, DECODED) if row else None

    def get_job(self, job_id: str) -> Job:
        row = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = %s", (job_id,)
        ).fetchone()
        if row is None:
            raise NotFound("job", job_id)
        return job_from_row(row, DECODED)

    def list_jobs(self, status: str | None, limit: int) -> list[Job]:
        where = "" if status is None else "WHERE status = %s "
        params: tuple[Any, ...] = (limit,) if status is None else (status, limit)
        rows = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs {where}ORDER BY created_at DESC, id DESC LIMIT %s",
            params,
        ).fetchall()
        return [job_from_row(row, DECODED) for row in rows]

    def enqueue_job(self, job: Job) -> bool:
        cursor = self._db.execute(
            f"INSERT INTO jobs ({JOB_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (
                job.id, job.tenant_id, job.kind, job.key, job.conversation_id,
                Jsonb(dict(job.payload)), job.status, job.attempts, job.max_attempts,
                job.lease_owner, job.lease_expires_at, job.run_after, job.last_error,
                job.created_at, job.updated_at,
            ),
        )  # fmt: skip
        return self._changed(cursor) == 1

    def claim_job(
        self, owner: str, now: float, lease_seconds: float, kinds: Sequence[str]
    ) -> Job | None:
        """The oldest ready job, leased to ``owner``: a pending one whose time has come, or a
        running one whose worker's lease ran out. Jobs other workers hold are skipped."""
        row = self._db.execute(
            f"""
            UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = %s,
                lease_expires_at = %s, updated_at = %s
            WHERE (tenant_id, id) = (
                SELECT tenant_id, id FROM jobs WHERE kind = ANY(%s) AND (
                    (status = 'pending' AND run_after <= %s)
                    OR (status = 'running' AND lease_expires_at <= %s))
                ORDER BY run_after, created_at, id LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            RETURNING {JOB_COLUMNS}
            """,
            (owner, now + lease_seconds, _now(), list(kinds), now, now),
        ).fetchone()
        return job_from_row(row, DECODED) if row else None

    def extend_lease(self, job_id: str, owner: str, until: float) -> bool:
        cursor = self._db.execute(
            "UPDATE jobs SET lease_expires_at = %s, updated_at = %s "
            "WHERE id = %s AND lease_owner = %s AND status = 'running'",
            (until, _now(), job_id, owner),
        )
        return self._changed(cursor) == 1

    def finish_job(self, job_id: str, owner: str, note: str | None = None) -> bool:
        cursor = self._db.execute(
            "UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, "
            "last_error = %s, updated_at = %s "
            "WHERE id = %s AND lease_owner = %s AND status = 'running'",
            (note, _now(), job_id, owner),
        )
        return self._changed(cursor) == 1

    def fail_job(self, job_id: str, owner: str, error: str, retry_at: float | None) -> None:
        """Back to pending until ``retry_at``; with None (attempts used up) it stays failed."""
        self._db.execute(
            "UPDATE jobs SET status = %s, run_after = COALESCE(%s, run_after), "
            "lease_owner = NULL, lease_expires_at = NULL, last_error = %s, updated_at = %s "
            "WHERE id = %s AND lease_owner = %s AND status = 'running'",
            ("failed" if retry_at is None else "pending", retry_at, error, _now(), job_id, owner),
        )

    def retry_job(self, job_id: str, now: float) -> None:
        cursor = self._db.execute(
            "UPDATE jobs SET status = 'pending', attempts = 0, run_after = %s, lease_owner = NULL, "
            "lease_expires_at = NULL, updated_at = %s "
            "WHERE id = %s AND status IN ('failed', 'done')",
            (now, _now(), job_id),
        )
        if self._changed(cursor) == 0:
            raise NotFound("failed or finished job", job_id)
