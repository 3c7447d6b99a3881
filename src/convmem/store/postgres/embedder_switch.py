"""PostgreSQL's staging of an embedder switch's vectors (the rest, and the switch's own locks:
``convmem.store.sql.embedder_switch``).

Staged vectors are written as the serving ones are (``search.py``, ``memory_search.py``): the
turns' conversations locked first in id order, a memory locked in the statement that stages
its vector, so a delete meeting a build waits or finds nothing, never leaves a vector. The
switch itself locks the tenant's conversations and memories the same way before it moves the
vectors: appends and searches of the tenant see the old vectors or the new, never a mix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from convmem.store.postgres.rows import TxnBase, halfvec
from convmem.store.search_index import MemoryVector, MessageVector
from convmem.store.sql.embedder_switch import EmbedderSwitchRows


class EmbedderSwitchTxnMixin(TxnBase, EmbedderSwitchRows):
    if TYPE_CHECKING:  # the search mixin's

        def _lock_conversations_of(self, which: str, params: Sequence[Any]) -> None: ...

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
