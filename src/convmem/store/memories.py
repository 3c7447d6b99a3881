"""Long-term memories, their audit trail and the user's memory switch.

A memory is the user's own record: a backend keeps it until it is deleted, and deleting it
removes its full-text entry and its vectors with it (``delete_memories``). The audit holds what
happened to which object, by whom and when — never content — and outlives every delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from convmem.model.admitted import Admitted
from convmem.model.memory import AuditEvent, MemoryRecord
from convmem.model.policy import NOT_SENSITIVE, SensitiveRecall


def sensitive_clause(
    sensitive: SensitiveRecall | None, mark: str, table: str = "m."
) -> tuple[str, list[str]]:
    """The special-category filter over ``memories`` (``AND …``, with a trailing space; its
    columns prefixed with ``table``) and its parameters (``mark`` is the driver's
    placeholder): a memory not sensitive passes, a sensitive one only with an open label and a
    purpose the request may use it for. Empty when ``sensitive`` is None (a listing, not a
    recall)."""
    if sensitive is None:
        return "", []
    if not sensitive.labels or not sensitive.purposes:
        return f"AND {table}sensitivity = {mark} ", [NOT_SENSITIVE]
    labels = ", ".join([mark] * len(sensitive.labels))
    purposes = ", ".join([mark] * len(sensitive.purposes))
    return (
        f"AND ({table}sensitivity = {mark} OR ({table}sensitivity IN ({labels}) "
        f"AND {table}purpose IN ({purposes}))) ",
        [NOT_SENSITIVE, *sensitive.labels, *sensitive.purposes],
    )


class _Unchanged:
    """The marker for a field a ``MemoryUpdate`` leaves as it is."""

    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED = _Unchanged()


@dataclass(frozen=True)
class MemoryUpdate:
    """The fields of a stored memory that may change after it is written (its text is never
    replaced: an edit is a new record). ``UNCHANGED`` leaves a field be; None clears a link.
    ``erase_content`` blanks the text and subject key and drops the full-text entry and vectors
    derived from them: a declined proposal keeps its id, status and audit, not what it said."""

    updated_at: datetime
    status: str | _Unchanged = UNCHANGED
    source_kind: str | _Unchanged = UNCHANGED
    supersedes_id: str | _Unchanged | None = UNCHANGED
    conflicts_with_id: str | _Unchanged | None = UNCHANGED
    erase_content: bool = False
    # a proposal's: surer once more turns say it (consolidation), with why
    confidence: float | _Unchanged = UNCHANGED
    basis: str | _Unchanged = UNCHANGED

    def changes(self) -> dict[str, str | float | datetime | None]:
        """Column → new value, ``updated_at`` last (only the fields that change)."""
        fields: dict[str, str | float | datetime | None] = {}
        for name in (
            "status", "source_kind", "supersedes_id", "conflicts_with_id", "confidence", "basis"
        ):  # fmt: skip
            value = getattr(self, name)
            if not isinstance(value, _Unchanged):
                fields[name] = value
        if self.erase_content:
            fields["text"] = fields["subject_key"] = ""
        fields["updated_at"] = self.updated_at
        return fields


class MemoryReads(Protocol):
    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord: ...

    def list_memories(
        self,
        tenant: str,
        user: str,
        *,
        statuses: Sequence[str] | None = None,
        category: str | None = None,
        scopes: Sequence[str] | None = None,
        purposes: Sequence[str] | None = None,
        subject_key: str | None = None,
        unexpired_at: datetime | None = None,
        unconflicted: bool = False,
        newest_first: bool = False,
        limit: int | None = None,
        sensitive: SensitiveRecall | None = None,
    ) -> list[MemoryRecord]:
        """The user's memories passing every filter given (``purposes``: the memory's purpose
        is one of them; an empty list matches none; ``sensitive``: see ``sensitive_clause``):
        oldest first (created, then id), or most recently updated first (then id
        descending)."""
        ...

    def list_audit(self, tenant: str, user: str) -> list[AuditEvent]:
        """The user's audit events in time order (then id)."""
        ...

    def memory_enabled(self, tenant: str, user: str) -> bool:
        """The user's own switch; True until they turn it off."""
        ...


class MemoryWrites(Protocol):
    def insert_memory(self, tenant: str, admitted: Admitted[MemoryRecord]) -> None:
        """Store a memory the never-store gate admitted (``convmem.memory.gate.admit``)."""
        ...

    def set_memory_fields(self, tenant: str, memory_id: str, update: MemoryUpdate) -> None: ...

    def delete_memories(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        """Delete the user's memories among ``memory_ids`` with their full-text entries and
        vectors, and clear ``conflicts_with_id`` on records that pointed at them."""
        ...

    def insert_audit(self, tenant: str, event: AuditEvent) -> None: ...

    def set_memory_enabled(self, tenant: str, user: str, enabled: bool, at: datetime) -> None: ...
