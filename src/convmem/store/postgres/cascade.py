"""PostgreSQL runs the lineage graph (``convmem.store.lineage``): how it writes "one of these
ids" and a JSON key, and the upkeep after rows go — entity names after facts or name sources,
search generations after index rows, word vectors after a conversation's vocabulary. Full text
lives in generated ``tsv`` columns of the rows themselves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from convmem.store.lineage import Cascade
from convmem.store.postgres.connection import Connection, settled
from convmem.store.postgres.rows import POSTGRES, TxnBase


class _Settled:
    """The transaction's connection as the cascade uses it: each statement has run when it
    returns, so the row counts it reports (``Cascade.counts``) are known (the transaction runs
    in pipeline mode, where a statement is otherwise only queued)."""

    def __init__(self, db: Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Any:
        cursor = self._db.execute(sql, params)
        settled(self._db)
        return cursor


class CascadeTxnMixin(TxnBase):
    if TYPE_CHECKING:  # the entity and search mixins' upkeep

        def _drop_entities_without_facts(self, tenant: str, entity_ids: Iterable[str]) -> None: ...

        def _bump(self, tenant: str, conversation_ids: Sequence[str]) -> None: ...

    def _cascade(self) -> Cascade:
        renamed = ("entity_id", self._drop_entities_without_facts)
        return Cascade(
            _Settled(self._db),
            POSTGRES,
            {
                "entity_facts": renamed,
                "entity_name_sources": renamed,
                "message_index": ("conversation_id", self._bump),
                "conversation_terms": ("term", self._forget_unused_term_vectors),
            },
        )

    def _schema(self) -> dict[str, frozenset[str]]:
        """Every table of the store's schema with its columns (what ``erase_owner`` sweeps)."""
        found: dict[str, set[str]] = {}
        for table, column in self._db.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
            "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
            "WHERE c.table_schema = current_schema()"
        ).fetchall():
            found.setdefault(table, set()).add(column)
        return {table: frozenset(columns) for table, columns in found.items()}

    def delete_user(self, tenant: str, user: str) -> dict[str, int]:
        self._lock_owner(tenant, user)
        # the user's conversations are locked first, in id order, as every writer locks them
        self._db.execute(
            "SELECT 1 FROM conversations WHERE tenant_id = %s AND user_id = %s "
            "ORDER BY id FOR UPDATE",
            (tenant, user),
        )
        return self._cascade().erase_owner(tenant, user, self._schema())

    def delete_tenant(self, tenant: str) -> dict[str, int]:
        self._db.execute(
            "SELECT 1 FROM conversations WHERE tenant_id = %s ORDER BY id FOR UPDATE", (tenant,)
        )
        # and its memories (no owner lock is taken here): a vector being written for one of
        # them is committed before the erase reads the vectors, or finds the memory gone
        self._db.execute(
            "SELECT 1 FROM memories WHERE tenant_id = %s ORDER BY id FOR UPDATE", (tenant,)
        )
        return self._cascade().erase_owner(tenant, None, self._schema())
