"""Idempotency keys: a write the caller may send again (a retried append or remember) is stored
once per principal and key.

A kept write names what it stored (a message or a memory) and the fingerprint of the call that
stored it (a digest of its arguments, never the arguments), so a retry with the same key and
the same call gets the original result back, and the same key with a different call is refused.
Keys are per principal (tenant and user): another user's key is another key. A key expires
after the database's period (``Config.idempotency_hours``): an expired one is no key at all, and
the user's expired keys are deleted at their next keyed write (and by a tenant's retention
sweep). A kept write goes with the message or memory it names (``convmem.store.lineage``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class KeptWrite:
    """What an idempotency key stored: ``kind`` (``append``, ``remember``, ``propose``), the
    call's ``fingerprint``, the message or memory it stored and the rest of its result
    (notices' statuses and ids: no text)."""

    key: str
    kind: str
    fingerprint: str
    created_at: datetime
    message_id: str | None = None
    memory_id: str | None = None
    result: Mapping[str, Any] = field(default_factory=dict)


class IdempotencyReads(Protocol):
    def kept_write(self, tenant: str, user: str, key: str, since: datetime) -> KeptWrite | None:
        """The principal's write under ``key``, if it was kept at ``since`` or later."""
        ...


class IdempotencyWrites(Protocol):
    def keep_write(self, tenant: str, user: str, write: KeptWrite, expired: datetime) -> bool:
        """Keep ``write`` under its key, first deleting the principal's keys kept before
        ``expired``. False, keeping nothing, when the key is held (a concurrent write with the
        same key committed first: the caller runs its unit again and finds it)."""
        ...

    def forget_kept_writes(self, tenant: str, before: datetime) -> int:
        """Delete the tenant's keys kept before ``before``; how many."""
        ...
