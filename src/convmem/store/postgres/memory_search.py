"""PostgreSQL primitives for searching a user's memories (mixed into ``PostgresTxn``): full text
over ``memories.tsv`` and exact vector search over ``memory_vectors``, each with the principal's
filters (scope, status, purpose, expiry) in the same query as the ranking."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from convmem.model.policy import SensitiveRecall
from convmem.store.embedder_switch import may_serve
from convmem.store.memories import sensitive_clause
from convmem.store.postgres.memories import memory_owner_lexeme
from convmem.store.postgres.rows import TxnBase, halfvec
from convmem.store.postgres.search import TERMS_QUERY, TS_WEIGHTS, owner_query
from convmem.store.ranking import MemoryHitRow
from convmem.store.rows import DECODED, MEMORY_WIDTH, PREFIXED_MEMORY_COLUMNS, memory_from_row
from convmem.store.search_index import MemoryVector, MissingMemoryVector, Vector


def _purposes(purposes: Sequence[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """The two parameters of ``(%s::text[] IS NULL OR m.purpose = ANY(%s))``: None when the
    request may use every purpose."""
    wanted = None if purposes is None else list(purposes)
    return wanted, wanted


class MemorySearchTxnMixin(TxnBase):
    def search_memory_terms(
        self,
        tenant: str,
        user: str,
        terms: Sequence[str],
        *,
        scopes: Sequence[str],
        purposes: Sequence[str] | None,
        now: datetime,
        limit: int,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryHitRow]:
        """Current, confirmed, unexpired, unconflicted memories of the principal matching any of
        ``terms``, best first. The principal's filters are in the same query as the ranking."""
        wanted = [t for t in terms if t]
        if not wanted or not scopes or purposes == () or limit < 1:
            return []
        self._lock_owner(tenant, user)
        owner = owner_query(memory_owner_lexeme(tenant, user))
        special, special_values = sensitive_clause(sensitive, "%s")
        rows = self._db.execute(
            f"""
            WITH q AS (SELECT ({TERMS_QUERY})::tsquery AS tq)
            SELECT {PREFIXED_MEMORY_COLUMNS}, ts_rank({TS_WEIGHTS}, m.tsv, q.tq, 1) AS rank
            FROM memories m, q
            WHERE q.tq IS NOT NULL
            AND m.tsv @@ ((%s || ' & (' || q.tq::text || ')')::tsquery)
            AND m.tenant_id = %s AND m.user_id = %s
            AND m.status = 'confirmed' AND m.conflicts_with_id IS NULL
            AND (m.expires_at IS NULL OR m.expires_at > %s) AND m.scope = ANY(%s)
            AND (%s::text[] IS NULL OR m.purpose = ANY(%s)) {special}
            ORDER BY rank DESC, m.id LIMIT %s
            """,
            (
                wanted,
                owner,
                tenant,
                user,
                now,
                list(scopes),
                *_purposes(purposes),
                *special_values,
                limit,
            ),
        ).fetchall()
        return [
            MemoryHitRow(memory_from_row(row, DECODED), float(row[MEMORY_WIDTH])) for row in rows
        ]

    def nearest_memories(
        self,
        tenant: str,
        user: str,
        embedder: str,
        vector: Vector,
        *,
        scopes: Sequence[str],
        purposes: Sequence[str] | None,
        now: datetime,
        limit: int,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryHitRow]:
        if not scopes or purposes == () or limit < 1:
            return []
        query = halfvec(vector)
        special, special_values = sensitive_clause(sensitive, "%s")
        rows = self._db.execute(
            f"SELECT {PREFIXED_MEMORY_COLUMNS}, 1 - (v.vector <=> %s) "
            "FROM memory_vectors v JOIN memories m "
            "ON m.tenant_id = v.tenant_id AND m.id = v.memory_id "
            "WHERE v.tenant_id = %s AND m.tenant_id = %s AND v.user_id = %s "
            "AND v.embedder = %s AND m.user_id = %s "
            "AND m.status = 'confirmed' AND m.conflicts_with_id IS NULL "
            "AND (m.expires_at IS NULL OR m.expires_at > %s) AND m.scope = ANY(%s) "
            "AND (%s::text[] IS NULL OR m.purpose = ANY(%s)) "
            f"{special}ORDER BY v.vector <=> %s, m.id LIMIT %s",
            (
                query,
                tenant,
                tenant,
                user,
                embedder,
                user,
                now,
                list(scopes),
                *_purposes(purposes),
                *special_values,
                query,
                limit,
            ),
        ).fetchall()
        return [
            MemoryHitRow(memory_from_row(row, DECODED), float(row[MEMORY_WIDTH])) for row in rows
        ]

    def set_memory_vectors(
        self, tenant: str, user: str, embedder: str, vectors: Sequence[MemoryVector]
    ) -> None:
        if not vectors:
            return
        # under the owner lock: a memory deleted meanwhile must not come back as a vector. A
        # tenant's erase takes no owner lock but the memories' rows (in id order): the same
        # statement locks them too, so it waits for an erase under way and then finds them gone
        # (where a check alone would insert after the erase's delete of vectors, and fail on the
        # key or leave the vector behind)
        self._lock_owner(tenant, user)
        ordered = sorted({v.memory_id: v.vector for v in vectors}.items())
        self._db.execute(
            "INSERT INTO memory_vectors (tenant_id, memory_id, user_id, embedder, vector) "
            "SELECT %s, v.memory_id, %s, %s, v.vector "
            "FROM unnest(%s::text[], %s::halfvec[]) AS v(memory_id, vector) "
            "JOIN memories m ON m.tenant_id = %s AND m.id = v.memory_id AND m.user_id = %s "
            f"WHERE {may_serve('%s', '%s')} ORDER BY m.id FOR KEY SHARE OF m "
            "ON CONFLICT (tenant_id, memory_id) DO UPDATE "
            "SET embedder = EXCLUDED.embedder, vector = EXCLUDED.vector",
            (tenant, user, embedder, [m for m, _ in ordered], [halfvec(b) for _, b in ordered],
             tenant, user, tenant, embedder),
        )  # fmt: skip

    def memory_vector_ids(self, tenant: str, user: str) -> list[str]:
        rows = self._db.execute(
            "SELECT memory_id FROM memory_vectors WHERE tenant_id = %s AND user_id = %s "
            "ORDER BY memory_id",
            (tenant, user),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def unembedded_memories(self, tenant: str, user: str, embedder: str) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM memories m WHERE m.tenant_id = %s AND m.user_id = %s "
            "AND m.status = 'confirmed' AND NOT EXISTS (SELECT 1 FROM memory_vectors v "
            "WHERE v.tenant_id = m.tenant_id AND v.memory_id = m.id AND v.embedder = %s "
            "AND v.vector IS NOT NULL)",
            (tenant, user, embedder),
        ).fetchone()
        return int(row[0]) if row else 0

    def missing_memory_vectors(self, embedder: str, limit: int) -> list[MissingMemoryVector]:
        rows = self._db.execute(
            "SELECT m.tenant_id, m.user_id, m.id, m.text FROM memories m "
            "LEFT JOIN memory_vectors v ON v.tenant_id = m.tenant_id AND v.memory_id = m.id "
            "WHERE (v.vector IS NULL OR v.embedder IS DISTINCT FROM %s) "
            f"AND m.status <> 'rejected' AND {may_serve('m.tenant_id', '%s')} LIMIT %s",
            (embedder, embedder, limit),
        ).fetchall()
        return [MissingMemoryVector(r[0], r[1], r[2], r[3]) for r in rows]
