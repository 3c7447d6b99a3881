"""SQLite rows of an embedder switch (``convmem.store.embedder_switch``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from convmem.store.embedder_switch import EmbedderSwitch, StagedCounts, UnstagedMemory
from convmem.store.search_index import MemoryVector, MessageVector, MissingMessageVector
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.vectors import to_blob

_CURRENT = "m.status IN ('confirmed', 'proposed')"


def _at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


class EmbedderSwitchTxnMixin:
    _db: Statements

    def embedder_switch(self, tenant: str) -> EmbedderSwitch | None:
        row = self._db.execute(
            "SELECT active, target, target_dimensions, started_at, switched_at "
            "FROM embedder_switches WHERE tenant_id = ?",
            (tenant,),
        ).fetchone()
        if row is None:
            return None
        return EmbedderSwitch(tenant, row[0], row[1], row[2], _at(row[3]), _at(row[4]))

    def unstaged_turns(self, tenant: str, embedder: str, limit: int) -> list[MissingMessageVector]:
        rows = self._db.execute(
            "SELECT i.tenant_id, i.message_id, i.speaker, i.body FROM message_index i "
            "WHERE i.tenant_id = ? AND (i.vector IS NULL OR i.embedder IS NOT ?) "
            "AND NOT EXISTS (SELECT 1 FROM staged_message_vectors s WHERE s.tenant_id = ? "
            "AND s.message_id = i.message_id AND s.embedder = ?) ORDER BY i.id LIMIT ?",
            (tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2], r[3]) for r in rows]

    def unstaged_memories(self, tenant: str, embedder: str, limit: int) -> list[UnstagedMemory]:
        rows = self._db.execute(
            "SELECT m.user_id, m.id, m.text FROM memories m WHERE m.tenant_id = ? "
            f"AND {_CURRENT} AND NOT EXISTS (SELECT 1 FROM memory_vectors v "
            "WHERE v.tenant_id = ? AND v.memory_id = m.id AND v.embedder = ?) "
            "AND NOT EXISTS (SELECT 1 FROM staged_memory_vectors s WHERE s.tenant_id = ? "
            "AND s.memory_id = m.id AND s.embedder = ?) ORDER BY m.id LIMIT ?",
            (tenant, tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [UnstagedMemory(r[0], r[1], r[2]) for r in rows]

    def unstaged_words(self, tenant: str, embedder: str, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT DISTINCT t.term FROM conversation_terms t WHERE t.tenant_id = ? "
            "AND t.speaker = 0 AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = ? AND v.embedder = ? AND v.term = t.term) ORDER BY t.term LIMIT ?",
            (tenant, tenant, embedder, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def staged_counts(self, tenant: str, embedder: str) -> StagedCounts:
        one = self._db.execute
        turns = one(
            "SELECT count(*) FROM staged_message_vectors WHERE tenant_id = ? AND embedder = ?",
            (tenant, embedder),
        ).fetchone()[0]
        memories = one(
            "SELECT count(*) FROM staged_memory_vectors WHERE tenant_id = ? AND embedder = ?",
            (tenant, embedder),
        ).fetchone()[0]
        big = 1 << 40
        return StagedCounts(
            int(turns), len(self.unstaged_turns(tenant, embedder, big)),
            int(memories), len(self.unstaged_memories(tenant, embedder, big)),
            len(self.unstaged_words(tenant, embedder, big)),
        )  # fmt: skip

    def switches_to(self, embedder: str) -> list[str]:
        rows = self._db.execute(
            "SELECT tenant_id FROM embedder_switches WHERE target = ? ORDER BY tenant_id",
            (embedder,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def begin_embedder_switch(
        self, tenant: str, active: str | None, target: str, dimensions: int, at: datetime
    ) -> None:
        self._db.execute(
            "DELETE FROM staged_message_vectors WHERE tenant_id = ? AND embedder != ?",
            (tenant, target),
        )
        self._db.execute(
            "DELETE FROM staged_memory_vectors WHERE tenant_id = ? AND embedder != ?",
            (tenant, target),
        )
        self._db.execute(
            "INSERT INTO embedder_switches (tenant_id, active, target, target_dimensions, "
            "started_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET "
            "active = coalesce(embedder_switches.active, excluded.active), "
            "target = excluded.target, target_dimensions = excluded.target_dimensions, "
            "started_at = excluded.started_at",
            (tenant, active, target, dimensions, utc_text(at)),
        )

    def stage_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO staged_message_vectors (tenant_id, message_id, embedder, "
            "vector) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM message_index "
            "WHERE tenant_id = ? AND message_id = ?) AND EXISTS (SELECT 1 FROM "
            "embedder_switches WHERE tenant_id = ? AND target = ?)",
            [(tenant, v.message_id, embedder, to_blob(v.vector), tenant, v.message_id, tenant,
              embedder) for v in vectors],
        )  # fmt: skip

    def stage_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO staged_memory_vectors (tenant_id, memory_id, user_id, "
            "embedder, vector) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories "
            "WHERE tenant_id = ? AND id = ? AND user_id = ?) AND EXISTS (SELECT 1 FROM "
            "embedder_switches WHERE tenant_id = ? AND target = ?)",
            [(tenant, v.memory_id, user, embedder, to_blob(v.vector), tenant, v.memory_id, user,
              tenant, embedder) for v in vectors],
        )  # fmt: skip

    def finish_embedder_switch(self, tenant: str, target: str, at: datetime) -> dict[str, int]:
        run = self._db.execute
        counts = {
            "message_index": run(
                "UPDATE message_index SET embedder = s.embedder, vector = s.vector "
                "FROM (SELECT message_id, embedder, vector FROM staged_message_vectors "
                "WHERE tenant_id = ? AND embedder = ?) AS s "
                "WHERE message_index.tenant_id = ? AND message_index.message_id = s.message_id",
                (tenant, target, tenant),
            ).rowcount,
        }
        # a turn none was staged for (written after the build's last batch) waits for the target
        counts["message_index"] += run(
            "UPDATE message_index SET embedder = NULL, vector = NULL WHERE tenant_id = ? "
            "AND embedder IS NOT ?",
            (tenant, target),
        ).rowcount
        counts["memory_vectors"] = run(
            "DELETE FROM memory_vectors WHERE tenant_id = ? AND embedder != ?", (tenant, target)
        ).rowcount
        counts["memory_vectors"] += run(
            "INSERT OR REPLACE INTO memory_vectors (tenant_id, memory_id, user_id, embedder, "
            "vector) SELECT tenant_id, memory_id, user_id, embedder, vector "
            "FROM staged_memory_vectors WHERE tenant_id = ? AND embedder = ?",
            (tenant, target),
        ).rowcount
        counts["term_vectors"] = run(
            "DELETE FROM term_vectors WHERE tenant_id = ? AND embedder != ?", (tenant, target)
        ).rowcount
        counts["staged"] = self._drop_staged(tenant)
        run(
            "UPDATE embedder_switches SET active = ?, target = NULL, target_dimensions = NULL, "
            "switched_at = ? WHERE tenant_id = ?",
            (target, utc_text(at), tenant),
        )
        run(
            "UPDATE search_generations SET generation = generation + 1 WHERE tenant_id = ?",
            (tenant,),
        )
        return counts

    def cancel_embedder_switch(self, tenant: str) -> int:
        record = self.embedder_switch(tenant)
        if record is not None and record.target is not None and record.target != record.active:
            self._db.execute(
                "DELETE FROM term_vectors WHERE tenant_id = ? AND embedder = ?",
                (tenant, record.target),
            )
        return self._drop_staged(tenant)

    def _drop_staged(self, tenant: str) -> int:
        gone = self._db.execute(
            "DELETE FROM staged_message_vectors WHERE tenant_id = ?", (tenant,)
        ).rowcount
        gone += self._db.execute(
            "DELETE FROM staged_memory_vectors WHERE tenant_id = ?", (tenant,)
        ).rowcount
        self._db.execute(
            "UPDATE embedder_switches SET target = NULL, target_dimensions = NULL "
            "WHERE tenant_id = ?",
            (tenant,),
        )
        return int(gone)
