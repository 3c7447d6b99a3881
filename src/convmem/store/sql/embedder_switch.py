"""An embedder switch's rows (``convmem.store.embedder_switch``), for both SQL backends: the
record, what is left to build, and the switch itself. Staging a batch of vectors is the
backend's (its vector codec, and on PostgreSQL the locks taken before the write)."""

from __future__ import annotations

from datetime import datetime

from convmem.store.embedder_switch import EmbedderSwitch, StagedCounts, UnstagedMemory
from convmem.store.search_index import MissingMessageVector
from convmem.store.sql.txn import SqlTxn

_CURRENT = "m.status IN ('confirmed', 'proposed')"


class EmbedderSwitchRows(SqlTxn):
    def embedder_switch(self, tenant: str) -> EmbedderSwitch | None:
        row = self._run(
            "SELECT active, target, target_dimensions, started_at, switched_at "
            "FROM embedder_switches WHERE tenant_id = ?",
            (tenant,),
        ).fetchone()
        if row is None:
            return None
        at = self._d.codec.optional_time
        return EmbedderSwitch(tenant, row[0], row[1], row[2], at(row[3]), at(row[4]))

    def unstaged_turns(self, tenant: str, embedder: str, limit: int) -> list[MissingMessageVector]:
        d = self._d
        rows = self._run(
            "SELECT i.tenant_id, i.message_id, i.speaker, i.body FROM message_index i "
            f"WHERE i.tenant_id = ? AND (i.vector IS NULL OR i.embedder {d.distinct_from} ?) "
            "AND NOT EXISTS (SELECT 1 FROM staged_message_vectors s WHERE s.tenant_id = ? "
            f"AND s.message_id = i.message_id AND s.embedder = ?) ORDER BY {d.index_order} "
            "LIMIT ?",
            (tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2], r[3]) for r in rows]

    def unstaged_memories(self, tenant: str, embedder: str, limit: int) -> list[UnstagedMemory]:
        rows = self._run(
            "SELECT m.user_id, m.id, m.text FROM memories m WHERE m.tenant_id = ? "
            f"AND {_CURRENT} AND NOT EXISTS (SELECT 1 FROM memory_vectors v "
            "WHERE v.tenant_id = ? AND v.memory_id = m.id AND v.embedder = ?) "
            "AND NOT EXISTS (SELECT 1 FROM staged_memory_vectors s WHERE s.tenant_id = ? "
            "AND s.memory_id = m.id AND s.embedder = ?) ORDER BY m.id LIMIT ?",
            (tenant, tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [UnstagedMemory(r[0], r[1], r[2]) for r in rows]

    def unstaged_words(self, tenant: str, embedder: str, limit: int) -> list[str]:
        rows = self._run(
            "SELECT DISTINCT t.term FROM conversation_terms t WHERE t.tenant_id = ? "
            "AND t.speaker = ? AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = ? AND v.embedder = ? AND v.term = t.term) ORDER BY t.term LIMIT ?",
            (tenant, self._d.flag(False), tenant, embedder, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def staged_counts(self, tenant: str, embedder: str) -> StagedCounts:
        def staged(table: str) -> int:
            row = self._run(
                f"SELECT count(*) FROM {table} WHERE tenant_id = ? AND embedder = ?",
                (tenant, embedder),
            ).fetchone()
            return int(row[0]) if row else 0

        big = 1 << 40
        return StagedCounts(
            staged("staged_message_vectors"), len(self.unstaged_turns(tenant, embedder, big)),
            staged("staged_memory_vectors"), len(self.unstaged_memories(tenant, embedder, big)),
            len(self.unstaged_words(tenant, embedder, big)),
        )  # fmt: skip

    def switches_to(self, embedder: str) -> list[str]:
        rows = self._run(
            "SELECT tenant_id FROM embedder_switches WHERE target = ? ORDER BY tenant_id",
            (embedder,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def begin_embedder_switch(
        self, tenant: str, active: str | None, target: str, dimensions: int, at: datetime
    ) -> None:
        self._run(
            "DELETE FROM staged_message_vectors WHERE tenant_id = ? AND embedder <> ?",
            (tenant, target),
        )
        self._run(
            "DELETE FROM staged_memory_vectors WHERE tenant_id = ? AND embedder <> ?",
            (tenant, target),
        )
        self._run(
            "INSERT INTO embedder_switches (tenant_id, active, target, target_dimensions, "
            "started_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET "
            "active = coalesce(embedder_switches.active, excluded.active), "
            "target = excluded.target, target_dimensions = excluded.target_dimensions, "
            "started_at = excluded.started_at",
            (tenant, active, target, dimensions, self._d.time(at)),
        )

    def finish_embedder_switch(self, tenant: str, target: str, at: datetime) -> dict[str, int]:
        d = self._d
        if d.for_update:
            # what every writer of the tenant's vectors locks first, in its order: appends and
            # searches of the tenant see the old vectors or the new, never a mix
            self._run(f"SELECT 1 FROM conversations WHERE tenant_id = ? ORDER BY id{d.for_update}",
                      (tenant,))  # fmt: skip
            self._run(f"SELECT 1 FROM memories WHERE tenant_id = ? ORDER BY id{d.for_update}",
                      (tenant,))  # fmt: skip

        def run(sql: str, *params: object) -> int:
            return self._changed(self._run(sql, params))

        counts = {
            "message_index": run(
                "UPDATE message_index SET embedder = s.embedder, vector = s.vector "
                "FROM (SELECT message_id, embedder, vector FROM staged_message_vectors "
                "WHERE tenant_id = ? AND embedder = ?) AS s "
                "WHERE message_index.tenant_id = ? AND message_index.message_id = s.message_id",
                tenant, target, tenant,
            ),
        }  # fmt: skip
        # a turn none was staged for (written after the build's last batch) waits for the target
        counts["message_index"] += run(
            "UPDATE message_index SET embedder = NULL, vector = NULL WHERE tenant_id = ? "
            f"AND embedder {d.distinct_from} ?",
            tenant, target,
        )  # fmt: skip
        counts["memory_vectors"] = run(
            "DELETE FROM memory_vectors WHERE tenant_id = ? AND embedder <> ?", tenant, target
        )
        counts["memory_vectors"] += run(
            "INSERT INTO memory_vectors (tenant_id, memory_id, user_id, embedder, vector) "
            "SELECT s.tenant_id, s.memory_id, s.user_id, s.embedder, s.vector "
            "FROM staged_memory_vectors s WHERE s.tenant_id = ? AND s.embedder = ? "
            "ON CONFLICT (tenant_id, memory_id) DO UPDATE "
            "SET embedder = excluded.embedder, vector = excluded.vector",
            tenant, target,
        )  # fmt: skip
        counts["term_vectors"] = run(
            "DELETE FROM term_vectors WHERE tenant_id = ? AND embedder <> ?", tenant, target
        )
        counts["staged"] = self._drop_staged(tenant)
        self._run(
            "UPDATE embedder_switches SET active = ?, target = NULL, target_dimensions = NULL, "
            "switched_at = ? WHERE tenant_id = ?",
            (target, d.time(at), tenant),
        )
        self._run(
            "UPDATE search_generations SET generation = generation + 1 WHERE tenant_id = ?",
            (tenant,),
        )
        return counts

    def cancel_embedder_switch(self, tenant: str) -> int:
        record = self.embedder_switch(tenant)
        if record is not None and record.target is not None and record.target != record.active:
            self._run(
                "DELETE FROM term_vectors WHERE tenant_id = ? AND embedder = ?",
                (tenant, record.target),
            )
        return self._drop_staged(tenant)

    def _drop_staged(self, tenant: str) -> int:
        gone = self._changed(
            self._run("DELETE FROM staged_message_vectors WHERE tenant_id = ?", (tenant,))
        )
        gone += self._changed(
            self._run("DELETE FROM staged_memory_vectors WHERE tenant_id = ?", (tenant,))
        )
        self._run(
            "UPDATE embedder_switches SET target = NULL, target_dimensions = NULL "
            "WHERE tenant_id = ?",
            (tenant,),
        )
        return gone
