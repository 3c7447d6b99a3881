"""SQLite runs the lineage graph (``convmem.store.lineage``): how it writes "one of these ids"
and a JSON key, and the upkeep after entity facts or name sources go. The full-text entries
follow their rows by trigger and are purged from FTS5's segments before commit (erase.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from convmem.store.lineage import Cascade
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.sql import SQLITE


class CascadeTxnMixin:
    _db: Statements

    if TYPE_CHECKING:  # the entity mixin's: names follow the sources left, bare entities go

        def _drop_entities_without_facts(self, tenant: str, entity_ids: Iterable[str]) -> None: ...

    def _cascade(self) -> Cascade:
        renamed = ("entity_id", self._drop_entities_without_facts)
        return Cascade(self._db, SQLITE, {"entity_facts": renamed, "entity_name_sources": renamed})

    def _schema(self) -> dict[str, frozenset[str]]:
        """Every table of the database with its columns (what ``erase_owner`` sweeps)."""
        tables = [
            row[0]
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
        ]
        return {
            table: frozenset(row[1] for row in self._db.execute(f'PRAGMA table_info("{table}")'))
            for table in tables
        }

    def delete_user(self, tenant: str, user: str) -> dict[str, int]:
        self._db.execute("PRAGMA defer_foreign_keys = ON")
        return self._cascade().erase_owner(tenant, user, self._schema())

    def delete_tenant(self, tenant: str) -> dict[str, int]:
        self._db.execute("PRAGMA defer_foreign_keys = ON")
        return self._cascade().erase_owner(tenant, None, self._schema())
