"""SQLite's part of long-term memory (the rest: ``convmem.store.sql.memories``): what an export
leaves out of its rows and how it writes their bytes."""

from __future__ import annotations

from typing import Any, ClassVar

from convmem.store.rows import export_bytes
from convmem.store.sql.memories import MemoryRows
from convmem.store.sqlite.connection import Statements

# re-exported: the search and ranking mixins import it from here
from convmem.store.sqlite.sql import utc_text as utc_text


class MemoryTxnMixin(MemoryRows):
    _db: Statements
    # the index forms beside a memory's texts are derived, for its full-text index alone
    _NOT_EXPORTED: ClassVar[frozenset[str]] = frozenset({"text_form", "subject_form"})

    def _exported(self, value: Any) -> Any:
        return export_bytes(value)
