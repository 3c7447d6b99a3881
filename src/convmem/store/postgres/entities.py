"""PostgreSQL rows of entity memory (migrations m013, m019, m021): entities, their names and the
messages that said them, their facts.

A user's entity writes are serialised by the owner lock (``TxnBase._lock_owner``), taken before
a write transaction reads the names it will merge into: two turns naming the same new person in
two conversations at once make one entity, not two."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from convmem.model.entities import Entity, EntityFact
from convmem.store.entities import (
    ENTITY_SELECT,
    FACT_COLUMNS,
    EntityTurnRow,
    confirmed_only_clause,
    entity_from_row,
    fact_from_row,
    plain_named_entity_facts,
    turns_span,
)
from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.search import (
    window_sql as window_clause,  # the retrievers' window filter
)
from convmem.store.ranking import Window
from convmem.store.rows import DECODED
from convmem.store.sql.entities import EntityRows

_JOINED = "FROM entities e JOIN entity_facts f ON f.tenant_id = e.tenant_id AND f.entity_id = e.id "


T = TypeVar("T")
# a snapshot read (``TxnBase._snapshot_read``) on this backend's cursors
_Read = tuple[tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], T]]


class EntityTxnMixin(CascadeTxnMixin, EntityRows):
    # --- reads ----------------------------------------------------------------------------------

    def _entities(self, tenant: str, where: str, params: tuple[object, ...], tail: str = "",
                  tail_params: tuple[object, ...] = ()) -> list[Entity]:  # fmt: skip
        return _entities_of(self._send_entities(tenant, where, params, tail, tail_params))

    def _send_entities(self, tenant: str, where: str, params: tuple[object, ...], tail: str = "",
                       tail_params: tuple[object, ...] = ()) -> psycopg.Cursor[Any]:  # fmt: skip
        # the names in the same statement (one round trip), in the order they were written
        return self._db.execute(
            f"SELECT {ENTITY_SELECT}, (SELECT array_agg(n.alias ORDER BY n.seq) "
            "FROM entity_names n WHERE n.tenant_id = %s AND n.entity_id = e.id) "
            f"{_JOINED} WHERE e.tenant_id = %s {where} "
            f"GROUP BY e.id, e.scope, e.name, e.type ORDER BY MAX(f.said_at) DESC, e.id {tail}",
            (tenant, tenant, *params, *tail_params),
        )

    def entities_named(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str] | None
    ) -> list[Entity]:
        if not keys or (scopes is not None and not scopes):
            return []
        self._lock_owner(tenant, user)  # in a write: what is read here is merged into
        if self._writable:
            return super().entities_named(tenant, user, keys, scopes=scopes)
        # a request looks up the names its query holds twice, of the memory block's scopes (its
        # facts) and of every scope (the recall of turns about them): in a read, one snapshot,
        # so the entities of every scope answer both, filtered (the order is kept)
        found = self._snapshot_read(*self._named_read(tenant, user, keys))
        return [e for e in found if scopes is None or e.scope in scopes]

    def _send_named(
        self, tenant: str, user: str, keys: Sequence[str], scopes: Sequence[str] | None
    ) -> psycopg.Cursor[Any]:
        return self._send_entities(
            tenant,
            "AND e.user_id = %s AND (%s::text[] IS NULL OR e.scope = ANY(%s)) AND e.id IN "
            "(SELECT n.entity_id FROM entity_names n WHERE n.tenant_id = %s "
            "AND n.user_id = %s AND n.key = ANY(%s))",
            (user, scopes and list(scopes), scopes and list(scopes), tenant, user, list(keys)),
        )

    def _named_read(
        self, tenant: str, user: str, keys: Sequence[str]
    ) -> tuple[tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], list[Entity]]]:
        """``entities_named`` of every scope as a snapshot read (``TxnBase._snapshot_read``)."""
        key = ("entities_named", tenant, user, "\x00".join(keys))
        return key, lambda: self._send_named(tenant, user, keys, None), _entities_of

    def named_entity_facts(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str],
        outside_conversation: str | None, confirmed_only: bool, limit: int,
    ) -> tuple[list[Entity], list[EntityFact]]:  # fmt: skip
        if not keys or not scopes:
            return [], []
        if self._writable:
            return plain_named_entity_facts(
                self, tenant, user, keys, scopes=scopes,
                outside_conversation=outside_conversation, confirmed_only=confirmed_only,
                limit=limit,
            )  # fmt: skip
        # both queued, one round trip (unless ``read_named_entity_facts_ahead`` sent them with
        # an earlier one): the entities (of every scope, as ``entities_named`` reads them,
        # unless it did already) and the facts of those of ``scopes``
        read = self._named_read(tenant, user, keys)
        self._prefetch(*read)
        facts = self._snapshot_read(*self._facts_read(
            tenant, user, keys, scopes, outside_conversation, confirmed_only, limit
        ))  # fmt: skip
        named = [e for e in self._snapshot_read(*read) if e.scope in scopes]
        if not named:
            return [], []
        return named, facts

    def read_named_entity_facts_ahead(
        self, tenant: str, user: str, keys: Sequence[str], *, scopes: Sequence[str],
        outside_conversation: str | None, confirmed_only: bool, limit: int,
    ) -> None:  # fmt: skip
        if not keys or not scopes:
            return
        self._prefetch(*self._named_read(tenant, user, keys))
        self._prefetch(*self._facts_read(
            tenant, user, keys, scopes, outside_conversation, confirmed_only, limit
        ))  # fmt: skip

    def _facts_read(
        self, tenant: str, user: str, keys: Sequence[str], scopes: Sequence[str],
        outside_conversation: str | None, confirmed_only: bool, limit: int,
    ) -> tuple[
        tuple[str, ...], Callable[[], psycopg.Cursor[Any]], Callable[[Any], list[EntityFact]]
    ]:  # fmt: skip
        """The facts of the entities named by ``keys`` of ``scopes``, as a snapshot read."""
        key = ("named_entity_facts", tenant, user, "\x00".join(keys), "\x00".join(scopes),
               outside_conversation or "", str(confirmed_only), str(limit))  # fmt: skip

        def send() -> psycopg.Cursor[Any]:
            return self._send_facts(
                tenant, user,
                "entity_id IN (SELECT n.entity_id FROM entity_names n JOIN entities e "
                "ON e.tenant_id = n.tenant_id AND e.id = n.entity_id WHERE n.tenant_id = %s "
                "AND n.user_id = %s AND n.key = ANY(%s) AND e.scope = ANY(%s))",
                (tenant, user, list(keys), list(scopes)),
                conversation_id=None, outside_conversation=outside_conversation,
                confirmed_only=confirmed_only, limit=limit,
            )  # fmt: skip

        return key, send, _facts_of

    def _send_facts(
        self, tenant: str, user: str, which: str, which_params: tuple[object, ...], *,
        conversation_id: str | None, outside_conversation: str | None, confirmed_only: bool,
        limit: int,
    ) -> psycopg.Cursor[Any]:  # fmt: skip
        """The user's facts of the entities ``which`` (a condition on ``entity_id``), queued."""
        return self._db.execute(
            f"SELECT {FACT_COLUMNS} FROM entity_facts WHERE tenant_id = %s AND user_id = %s "
            f"AND {which} AND (%s::text IS NULL OR conversation_id = %s) "
            "AND (%s::text IS NULL OR conversation_id <> %s) "
            f"{confirmed_only_clause(confirmed_only)}ORDER BY said_at DESC, id LIMIT %s",
            (
                tenant, user, *which_params, conversation_id, conversation_id,
                outside_conversation, outside_conversation, limit,
            ),
        )  # fmt: skip

    def entities_named_prefix(
        self, tenant: str, user: str, prefix: str, *, scopes: Sequence[str], limit: int
    ) -> list[Entity]:
        if not prefix or not scopes:
            return []
        self._lock_owner(tenant, user)  # as in entities_named
        return self._entities(
            tenant,
            "AND e.user_id = %s AND e.scope = ANY(%s) AND e.id IN (SELECT n.entity_id FROM "
            "entity_names n WHERE n.tenant_id = %s AND n.user_id = %s "
            "AND starts_with(n.key, %s) AND n.key <> %s)",
            (user, list(scopes), tenant, user, prefix, prefix),
            "LIMIT %s", (limit,),
        )  # fmt: skip

    def entity_turns(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        entity_ids: Sequence[str],
        *,
        window: Window,
        limit: int,
    ) -> list[EntityTurnRow]:
        if not entity_ids:
            return []
        return _turns_of(self._send_entity_turns(tenant, user, conversation_id, entity_ids,
                                                 window=window, limit=limit))  # fmt: skip

    def _send_entity_turns(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str], *,
        window: Window, limit: int,
    ) -> psycopg.Cursor[Any]:  # fmt: skip
        where, params = window_clause(window)
        # the entities' facts in this conversation first, each turn then looked up by key (a
        # LATERAL subquery with LIMIT 1): the work is the entities' facts, whatever the planner
        # thinks of the tables (joined plainly, a young table taken for nearly empty read every
        # fact of the conversation once per turn: 28-48 ms for 300 turns)
        return self._db.execute(
            "SELECT DISTINCT f.message_id, f.entity_id, i.speaker, i.depth, i.created_at "
            "FROM entity_facts f CROSS JOIN LATERAL (SELECT i.speaker, i.depth, i.created_at "
            "FROM message_index i WHERE i.tenant_id = %s AND i.message_id = f.message_id "
            f"AND i.user_id = %s AND i.conversation_id = %s {where} LIMIT 1) i "
            "WHERE f.tenant_id = %s AND f.user_id = %s AND f.conversation_id = %s "
            "AND f.entity_id = ANY(%s) "
            "ORDER BY i.depth DESC, f.message_id, f.entity_id LIMIT %s",
            (tenant, user, conversation_id, *params, tenant, user, conversation_id,
             list(entity_ids), limit),
        )  # fmt: skip

    def indexed_turn_count(
        self, tenant: str, user: str, conversation_id: str, *, window: Window, cap: int
    ) -> int:
        return _count_of(self._send_turn_count(tenant, user, conversation_id, window, cap))

    def _send_turn_count(
        self, tenant: str, user: str, conversation_id: str, window: Window, cap: int
    ) -> psycopg.Cursor[Any]:
        where, params = window_clause(window)
        return self._db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM message_index i WHERE i.tenant_id = %s "
            f"AND i.user_id = %s AND i.conversation_id = %s {where} LIMIT %s) counted",
            (tenant, user, conversation_id, *params, cap),
        )

    def counted_entity_turns(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str], *,
        window: Window, limit: int, cap: int,
    ) -> tuple[list[EntityTurnRow], int]:  # fmt: skip
        if not entity_ids:
            return [], 0
        # both queued, one round trip (in a read, perhaps with an earlier one: see
        # ``read_counted_entity_turns_ahead``): the count over the whole window, which is the
        # span the turns were read from unless ``limit`` of them came back (then counted again)
        turns_read, count_read = self._entity_turns_reads(
            tenant, user, conversation_id, entity_ids, window, limit, cap
        )
        if self._writable:  # no snapshot to keep them in: both sent before either is read
            sent, count = turns_read[1](), count_read[1]()
            turns = _turns_of(sent)
        else:
            self._prefetch(*count_read)
            turns = self._snapshot_read(*turns_read)
        if not turns:
            return [], 0
        span = turns_span(window, turns, limit)
        if span == window:
            return turns, _count_of(count) if self._writable else self._snapshot_read(*count_read)
        return turns, self.indexed_turn_count(tenant, user, conversation_id, window=span, cap=cap)

    def read_counted_entity_turns_ahead(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str], *,
        window: Window, limit: int, cap: int,
    ) -> None:  # fmt: skip
        if not entity_ids:
            return
        for read in self._entity_turns_reads(
            tenant, user, conversation_id, entity_ids, window, limit, cap
        ):
            self._prefetch(*read)

    def _entity_turns_reads(
        self, tenant: str, user: str, conversation_id: str, entity_ids: Sequence[str],
        window: Window, limit: int, cap: int,
    ) -> tuple[_Read[list[EntityTurnRow]], _Read[int]]:  # fmt: skip
        """``counted_entity_turns``' two reads as snapshot reads: the turns, the window's count."""
        asked = (tenant, user, conversation_id, "\x00".join(entity_ids), repr(window))
        turns: _Read[list[EntityTurnRow]] = (
            ("entity_turns", *asked, str(limit)),
            lambda: self._send_entity_turns(
                tenant, user, conversation_id, entity_ids, window=window, limit=limit
            ),
            _turns_of,
        )
        count: _Read[int] = (
            ("turn_count", *asked, str(cap)),
            lambda: self._send_turn_count(tenant, user, conversation_id, window, cap),
            _count_of,
        )
        return turns, count

    # --- writes ---------------------------------------------------------------------------------


def _turns_of(sent: psycopg.Cursor[Any]) -> list[EntityTurnRow]:
    return [EntityTurnRow(r[0], r[1], r[2], int(r[3]), r[4]) for r in sent.fetchall()]


def _count_of(sent: psycopg.Cursor[Any]) -> int:
    row = sent.fetchone()
    return int(row[0]) if row else 0


def _entities_of(sent: psycopg.Cursor[Any]) -> list[Entity]:
    return [entity_from_row(row[:-1], list(row[-1] or ()), DECODED) for row in sent.fetchall()]


def _facts_of(sent: psycopg.Cursor[Any]) -> list[EntityFact]:
    return [fact_from_row(row, DECODED) for row in sent.fetchall()]
