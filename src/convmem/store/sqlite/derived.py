"""SQLite rows for summaries and the job queue (mixed into ``SQLiteTxn``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from convmem.errors import NotFound
from convmem.model.admitted import Admitted
from convmem.model.summary import Job, SummaryRecord
from convmem.store.rows import JOB_COLUMNS, SUMMARY_COLUMNS, job_from_row, summary_from_row
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.sql import CHAIN_CTE, TEXT_CODEC


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DerivedRows:
    """Summaries and jobs. Needs ``self._db`` (the transaction's connection)."""

    _db: Statements

    # --- summaries ------------------------------------------------------------------------------

    def summary_through(
        self, tenant: str, message_id: str, summarizer: str, prompt_version: str
    ) -> SummaryRecord | None:
        row = self._db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND through_message_id = ? AND summarizer = ? AND prompt_version = ?",
            (tenant, message_id, summarizer, prompt_version),
        ).fetchone()
        return summary_from_row(row, TEXT_CODEC) if row else None

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
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND conversation_id = ? AND summarizer = ? AND prompt_version = ? "
            "AND through_depth < ? ORDER BY through_depth DESC, id DESC LIMIT ?",
            (tenant, conversation_id, summarizer, prompt_version, below_depth, limit),
        ).fetchall()
        return [summary_from_row(row, TEXT_CODEC) for row in rows]

    def conversation_summaries(self, tenant: str, conversation_id: str) -> list[SummaryRecord]:
        rows = self._db.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE tenant_id = ? "
            "AND conversation_id = ? ORDER BY through_depth, id",
            (tenant, conversation_id),
        ).fetchall()
        return [summary_from_row(row, TEXT_CODEC) for row in rows]

    def path_ids(self, tenant: str, message_id: str, count: int) -> list[str]:
        rows = self._db.execute(
            CHAIN_CTE
            + """
            SELECT chain.id FROM chain
            JOIN messages m ON m.tenant_id = ? AND m.id = chain.id
            ORDER BY chain.n
            """,
            (message_id, tenant, count, tenant),
        ).fetchall()
        return [row[0] for row in rows]

    def insert_summary(self, tenant: str, user: str, admitted: Admitted[SummaryRecord]) -> bool:
        record = admitted.value
        cursor = self._db.execute(
            f"INSERT OR IGNORE INTO summaries (tenant_id, user_id, {SUMMARY_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tenant,
                user,
                record.id,
                record.conversation_id,
                record.through_message_id,
                record.through_depth,
                record.covered_hash,
                record.base_hash,
                record.segment_length,
                record.previous_id,
                record.summarizer,
                record.prompt_version,
                json.dumps(record.snapshot.to_dict(), ensure_ascii=False),
                record.rendered,
                record.tokens,
                json.dumps(record.cost.to_dict()),
                record.fallback_reason,
                (record.created_at or datetime.now(UTC)).isoformat(),
            ),
        )
        return cursor.rowcount == 1

    def delete_summary(self, tenant: str, summary_id: str) -> None:
        self._db.execute(
            "DELETE FROM summaries WHERE tenant_id = ? AND id = ?", (tenant, summary_id)
        )

    # --- jobs -----------------------------------------------------------------------------------

    def find_job(self, tenant: str, key: str) -> Job | None:
        row = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE tenant_id = ? AND key = ?", (tenant, key)
        ).fetchone()
        return job_from_row(row, TEXT_CODEC) if row else None

    def get_job(self, job_id: str) -> Job:
        row = self._db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise NotFound("job", job_id)
        return job_from_row(row, TEXT_CODEC)

    def list_jobs(self, status: str | None, limit: int) -> list[Job]:
        rows = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE ? IS NULL OR status = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (status, status, limit),
        ).fetchall()
        return [job_from_row(row, TEXT_CODEC) for row in rows]

    def enqueue_job(self, job: Job) -> bool:
        cursor = self._db.execute(
            f"INSERT OR IGNORE INTO jobs ({JOB_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job.id,
                job.tenant_id,
                job.kind,
                job.key,
                job.conversation_id,
                json.dumps(dict(job.payload)),
                job.status,
                job.attempts,
                job.max_attempts,
                job.lease_owner,
                job.lease_expires_at,
                job.run_after,
                job.last_error,
                job.created_at.isoformat(),
                job.updated_at.isoformat(),
            ),
        )
        return cursor.rowcount == 1

    def claim_job(
        self, owner: str, now: float, lease_seconds: float, kinds: Sequence[str]
    ) -> Job | None:
        """The oldest ready job, leased to ``owner``: a pending one whose time has come, or a
        running one whose worker's lease ran out (it crashed or hung)."""
        marks = ", ".join("?" for _ in kinds)
        row = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE kind IN ({marks}) AND ("
            "(status = 'pending' AND run_after <= ?) OR "
            "(status = 'running' AND lease_expires_at <= ?)) "
            "ORDER BY run_after, created_at, id LIMIT 1",
            (*kinds, now, now),
        ).fetchone()
        if row is None:
            return None
        job = job_from_row(row, TEXT_CODEC)
        self._db.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, "
            "lease_expires_at = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
            (owner, now + lease_seconds, _now(), job.tenant_id, job.id),
        )
        return self.get_job(job.id)

    def extend_lease(self, job_id: str, owner: str, until: float) -> bool:
        cursor = self._db.execute(
            "UPDATE jobs SET lease_expires_at = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            (until, _now(), job_id, owner),
        )
        return cursor.rowcount == 1

    def finish_job(self, job_id: str, owner: str, note: str | None = None) -> bool:
        cursor = self._db.execute(
            "UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, "
            "last_error = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            (note, _now(), job_id, owner),
        )
        return cursor.rowcount == 1

    def fail_job(self, job_id: str, owner: str, error: str, retry_at: float | None) -> None:
        """Back to pending until ``retry_at``; with None (attempts used up) it stays failed."""
        self._db.execute(
            "UPDATE jobs SET status = ?, run_after = COALESCE(?, run_after), lease_owner = NULL, "
            "lease_expires_at = NULL, last_error = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND status = 'running'",
            ("failed" if retry_at is None else "pending", retry_at, error, _now(), job_id, owner),
        )

    def retry_job(self, job_id: str, now: float) -> None:
        cursor = self._db.execute(
            "UPDATE jobs SET status = 'pending', attempts = 0, run_after = ?, lease_owner = NULL, "
            "lease_expires_at = NULL, updated_at = ? WHERE id = ? AND status IN ('failed', 'done')",
            (now, _now(), job_id),
        )
        if cursor.rowcount == 0:
            raise NotFound("failed or finished job", job_id)
