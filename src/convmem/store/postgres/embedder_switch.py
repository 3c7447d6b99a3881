"""PostgreSQL rows of an embedder switch (``convmem.store.embedder_switch``).

Staged vectors are written as the serving ones are (``search.py``, ``memory_search.py``): the
turns' conversations locked first in id order, a memory locked in the statement that stages
its vector, so a delete meeting a build waits or finds nothing, never leaves a vector. The
switch itself locks the tenant's conversations and memories the same way before it moves the
vectors: appends and searches of the tenant see the old vectors or the new, never a mix."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from convmem.store.embedder_switch import EmbedderSwitch, StagedCounts, UnstagedMemory
from convmem.store.postgres.rows import TxnBase, halfvec
from convmem.store.search_index import MemoryVector, MessageVector, MissingMessageVector

_CURRENT = "m.status IN ('confirmed', 'proposed')"


class EmbedderSwitchTxnMixin(TxnBase):
    if TYPE_CHECKING:  # the search mixin's

        def _lock_conversations_of(self, which: str, params: Sequence[Any]) -> None: ...

    def embedder_switch(self, tenant: str) -> EmbedderSwitch | None:
        row = self._db.execute(
            "SELECT active, target, target_dimensions, started_at, switched_at "
            "FROM embedder_switches WHERE tenant_id = %s",
            (tenant,),
        ).fetchone()
        if row is None:
            return None
        return EmbedderSwitch(tenant, row[0], row[1], row[2], row[3], row[4])

    def unstaged_turns(self, tenant: str, embedder: str, limit: int) -> list[MissingMessageVector]:
        rows = self._db.execute(
            "SELECT i.tenant_id, i.message_id, i.speaker, i.body FROM message_index i "
            "WHERE i.tenant_id = %s AND (i.vector IS NULL OR i.embedder IS DISTINCT FROM %s) "
            "AND NOT EXISTS (SELECT 1 FROM staged_message_vectors s WHERE s.tenant_id = %s "
            "AND s.message_id = i.message_id AND s.embedder = %s) ORDER BY i.seq LIMIT %s",
            (tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [MissingMessageVector(r[0], r[1], r[2], r[3]) for r in rows]

    def unstaged_memories(self, tenant: str, embedder: str, limit: int) -> list[UnstagedMemory]:
        rows = self._db.execute(
            "SELECT m.user_id, m.id, m.text FROM memories m WHERE m.tenant_id = %s "
            f"AND {_CURRENT} AND NOT EXISTS (SELECT 1 FROM memory_vectors v "
            "WHERE v.tenant_id = %s AND v.memory_id = m.id AND v.embedder = %s) "
            "AND NOT EXISTS (SELECT 1 FROM staged_memory_vectors s WHERE s.tenant_id = %s "
            "AND s.memory_id = m.id AND s.embedder = %s) ORDER BY m.id LIMIT %s",
            (tenant, tenant, embedder, tenant, embedder, limit),
        ).fetchall()
        return [UnstagedMemory(r[0], r[1], r[2]) for r in rows]

    def unstaged_words(self, tenant: str, embedder: str, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT DISTINCT t.term FROM conversation_terms t WHERE t.tenant_id = %s "
            "AND NOT t.speaker AND NOT EXISTS (SELECT 1 FROM term_vectors v "
            "WHERE v.tenant_id = %s AND v.embedder = %s AND v.term = t.term) "
            "ORDER BY t.term LIMIT %s",
            (tenant, tenant, embedder, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def staged_counts(self, tenant: str, embedder: str) -> StagedCounts:
        def count(sql: str, params: Sequence[Any]) -> int:
            row = self._db.execute(sql, params).fetchone()
            return int(row[0]) if row else 0

        big = 1 << 40
        return StagedCounts(
            count("SELECT count(*) FROM staged_message_vectors WHERE tenant_id = %s "
                  "AND embedder = %s", (tenant, embedder)),
            len(self.unstaged_turns(tenant, embedder, big)),
            count("SELECT count(*) FROM staged_memory_vectors WHERE tenant_id = %s "
                  "AND embedder = %s", (tenant, embedder)),
            len(self.unstaged_memories(tenant, embedder, big)),
            len(self.unstaged_words(tenant, embedder, big)),
        )  # fmt: skip

    def switches_to(self, embedder: str) -> list[str]:
        rows = self._db.execute(
            "SELECT tenant_id FROM embedder_switches WHERE target = %s ORDER BY tenant_id",
            (embedder,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def begin_embedder_switch(
        self, tenant: str, active: str | None, target: str, dimensions: int, at: datetime
    ) -> None:
        self._db.execute(
            "DELETE FROM staged_message_vectors WHERE tenant_id = %s AND embedder <> %s",
            (tenant, target),
        )
        self._db.execute(
            "DELETE FROM staged_memory_vectors WHERE tenant_id = %s AND embedder <> %s",
            (tenant, target),
        )
        self._db.execute(
            "INSERT INTO embedder_switches (tenant_id, active, target, target_dimensions, "
            "started_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id) DO UPDATE SET "
            "active = coalesce(embedder_switches.active, EXCLUDED.active), "
            "target = EXCLUDED.target, target_dimensions = EXCLUDED.target_dimensions, "
            "started_at = EXCLUDED.started_at",
            (tenant, active, target, dimensions, at),
        )

    def stage_message_vectors(
        self, tenant: str, embedder: str, vectors: Sequence[MessageVector]
    ) -> None:
        if not vectors:
            return
        ids = [v.message_id for v in vectors]
        self._lock_conversations_of(
            "SELECT conversation_id FROM message_index WHERE tenant_id = %s "
            "AND message_id = ANY(%s)",
            (tenant, tenant, ids),
        )
        self._db.execute(
            "INSERT INTO staged_message_vectors (tenant_id, message_id, embedder, vector) "
            "SELECT %s, v.message_id, %s, v.vector "
            "FROM unnest(%s::text[], %s::halfvec[]) AS v(message_id, vector) "
            "WHERE EXISTS (SELECT 1 FROM message_index i WHERE i.tenant_id = %s "
            "AND i.message_id = v.message_id) AND EXISTS (SELECT 1 FROM embedder_switches s "
            "WHERE s.tenant_id = %s AND s.target = %s) "
            "ON CONFLICT (tenant_id, message_id) DO UPDATE "
            "SET embedder = EXCLUDED.embedder, vector = EXCLUDED.vector",
            (tenant, embedder, ids, [halfvec(v.vector) for v in vectors], tenant, tenant,
             embedder),
        )  # fmt: skip

    def stage_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        if not vectors:
            return
        self._lock_owner(tenant, user)
        ordered = sorted({v.memory_id: v.vector for v in vectors}.items())
        self._db.execute(
            "INSERT INTO staged_memory_vectors (tenant_id, memory_id, user_id, embedder, vector) "
            "SELECT %s, v.memory_id, %s, %s, v.vector "
            "FROM unnest(%s::text[], %s::halfvec[]) AS v(memory_id, vector) "
            "JOIN memories m ON m.tenant_id = %s AND m.id = v.memory_id AND m.user_id = %s "
            "WHERE EXISTS (SELECT 1 FROM embedder_switches s WHERE s.tenant_id = %s "
            "AND s.target = %s) ORDER BY m.id FOR KEY SHARE OF m "
            "ON CONFLICT (tenant_id, memory_id) DO UPDATE "
            "SET embedder = EXCLUDED.embedder, vector = EXCLUDED.vector",
            (tenant, user, embedder, [m for m, _ in ordered], [halfvec(b) for _, b in ordered],
             tenant, user, tenant, embedder),
        )  # fmt: skip

    def finish_embedder_switch(self, tenant: str, target: str, at: datetime) -> dict[str, int]:
        # what every writer of the tenant's vectors locks first, in its order
        self._db.execute(
            "SELECT 1 FROM conversations WHERE tenant_id = %s ORDER BY id FOR UPDATE", (tenant,)
        )
        self._db.execute(
            "SELECT 1 FROM memories WHERE tenant_id = %s ORDER BY id FOR UPDATE", (tenant,)
        )
        run = self._db.execute
        counts = {
            "message_index": self._changed(run(
                "UPDATE message_index i SET embedder = s.embedder, vector = s.vector "
                "FROM staged_message_vectors s WHERE i.tenant_id = %s AND s.tenant_id = %s "
                "AND s.message_id = i.message_id AND s.embedder = %s",
                (tenant, tenant, target),
            )),
        }  # fmt: skip
        # a turn none was staged for (written after the build's last batch) waits for the target
        counts["message_index"] += self._changed(run(
            "UPDATE message_index SET embedder = NULL, vector = NULL WHERE tenant_id = %s "
            "AND embedder IS DISTINCT FROM %s", (tenant, target),
        ))  # fmt: skip
        counts["memory_vectors"] = self._changed(run(
            "DELETE FROM memory_vectors WHERE tenant_id = %s AND embedder <> %s", (tenant, target)
        ))  # fmt: skip
        counts["memory_vectors"] += self._changed(run(
            "INSERT INTO memory_vectors (tenant_id, memory_id, user_id, embedder, vector) "
            "SELECT s.tenant_id, s.memory_id, s.user_id, s.embedder, s.vector "
            "FROM staged_memory_vectors s WHERE s.tenant_id = %s AND s.embedder = %s "
            "ON CONFLICT (tenant_id, memory_id) DO UPDATE "
            "SET embedder = EXCLUDED.embedder, vector = EXCLUDED.vector",
            (tenant, target),
        ))  # fmt: skip
        counts["term_vectors"] = self._changed(run(
            "DELETE FROM term_vectors WHERE tenant_id = %s AND embedder <> %s", (tenant, target)
        ))  # fmt: skip
        counts["staged"] = self._drop_staged(tenant)
        run(
            "UPDATE embedder_switches SET active = %s, target = NULL, target_dimensions = NULL, "
            "switched_at = %s WHERE tenant_id = %s",
            (target, at, tenant),
        )
        run(
            "UPDATE search_generations SET generation = generation + 1 WHERE tenant_id = %s",
            (tenant,),
        )
        return counts

    def cancel_embedder_switch(self, tenant: str) -> int:
        record = self.embedder_switch(tenant)
        if record is not None and record.target is not None and record.target != record.active:
            self._db.execute(
                "DELETE FROM term_vectors WHERE tenant_id = %s AND embedder = %s",
                (tenant, record.target),
            )
        return self._drop_staged(tenant)

    def _drop_staged(self, tenant: str) -> int:
        gone = self._changed(
            self._db.execute("DELETE FROM staged_message_vectors WHERE tenant_id = %s", (tenant,))
        )
        gone += self._changed(
            self._db.execute("DELETE FROM staged_memory_vectors WHERE tenant_id = %s", (tenant,))
        )
        self._db.execute(
            "UPDATE embedder_switches SET target = NULL, target_dimensions = NULL "
            "WHERE tenant_id = %s",
            (tenant,),
        )
        return gone
