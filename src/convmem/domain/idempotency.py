"""Idempotency keys on the write API: a retried append or remember is stored once.

A caller names a write with a key of its own (``append(..., idempotency_key=...)``, HTTP's
``Idempotency-Key`` header). The first write under a key stores its result's ids with a
fingerprint of the call — a SHA-256 of the call's arguments, salted with the principal and the
key, never the arguments themselves — in the same transaction as the write. A retry with the
same key and the same call finds it and gets the original result, storing nothing; the same key
with another call is ``IdempotencyConflict``. Keys are per principal and expire after
``Config.idempotency_hours`` (``convmem.store.idempotency``). A write the policy refused stored
nothing, so it keeps no key: its retry is refused again, the same way.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from convmem.errors import IdempotencyConflict, InvalidInput, NotFound, WriteConflict
from convmem.model.memory import MemoryNotice, MemoryRecord
from convmem.model.principal import Principal
from convmem.model.tree import MAX_IDENTIFIER_BYTES
from convmem.store.base import KeptWrite, ReadTxn, WriteTxn


def check_key(key: object) -> str:
    """The key as given, when it is one: printable text of at most ``MAX_IDENTIFIER_BYTES``
    bytes (HTTP sends it as a header; the API takes the same). InvalidInput otherwise."""
    if not isinstance(key, str) or not key or not key.strip():
        raise InvalidInput("an idempotency key is a non-empty string")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_IDENTIFIER_BYTES:
        raise InvalidInput(f"an idempotency key is at most {MAX_IDENTIFIER_BYTES} bytes")
    if not key.isprintable():
        raise InvalidInput("an idempotency key holds no control characters")
    return key


def fingerprint(tenant: str, user: str, key: str, kind: str, call: Mapping[str, Any]) -> str:
    """A digest of the call (its kind and arguments as given), salted with the principal and
    the key: two calls that would store the same thing have the same one."""
    document = json.dumps(
        [tenant, user, key, kind, call], sort_keys=True, default=_plain, ensure_ascii=False
    )
    return hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return repr(value)


def replayed(
    tx: ReadTxn,
    tenant: str,
    user: str,
    key: str,
    kind: str,
    fingerprint: str,
    *,
    now: datetime,
    period: timedelta,
) -> KeptWrite | None:
    """The write kept under ``key`` for this same call (None: the key is free or expired);
    IdempotencyConflict when the key holds another call's write."""
    kept = tx.kept_write(tenant, user, key, now - period)
    if kept is None:
        return None
    if kept.kind != kind or kept.fingerprint != fingerprint:
        raise IdempotencyConflict()
    return kept


def keep(tx: WriteTxn, tenant: str, user: str, write: KeptWrite, *, period: timedelta) -> None:
    """Keep ``write`` under its key in the write's own transaction. A concurrent write that
    took the key first (PostgreSQL) aborts this one as a conflict: its unit runs again and
    finds the key (``replayed``)."""
    if not tx.keep_write(tenant, user, write, write.created_at - period):
        raise WriteConflict("the idempotency key was taken by a concurrent write")


@dataclass(frozen=True)
class Keyed:
    """A write the caller named with an idempotency key: the key, the kind of write and its
    arguments as given (what the fingerprint is made of)."""

    key: str
    kind: str
    call: Mapping[str, Any]

    @classmethod
    def of(cls, key: str | None, kind: str, call: Mapping[str, Any]) -> Keyed | None:
        """None without a key; InvalidInput for a malformed one (before anything is written)."""
        return None if key is None else cls(check_key(key), kind, call)

    def fingerprint(self, tenant: str, user: str) -> str:
        return fingerprint(tenant, user, self.key, self.kind, self.call)


def notices_result(notices: Sequence[MemoryNotice]) -> dict[str, Any]:
    """What a kept write remembers of its notices: statuses, reasons and ids (no text)."""
    return {
        "notices": [
            {
                "status": n.status,
                "reason": n.reason,
                "memory_id": n.memory.id if n.memory is not None else None,
                "memory_ids": list(n.memory_ids),
                "superseded": [r.id for r in n.superseded],
            }
            for n in notices
        ]
    }


def kept_notices(tx: ReadTxn, who: Principal, kept: KeptWrite) -> tuple[MemoryNotice, ...]:
    """The notices of a kept write as they read now: each memory as it is (None when it was
    deleted since), its text the memory's."""
    out = []
    for given in kept.result.get("notices", ()):
        record = _memory(tx, who, given.get("memory_id"))
        superseded = tuple(
            r for r in (_memory(tx, who, i) for i in given.get("superseded", ())) if r is not None
        )
        out.append(
            MemoryNotice(
                str(given["status"]),
                record.text if record is not None else "",
                given.get("reason"),
                record,
                tuple(given.get("memory_ids", ())),
                superseded,
            )
        )
    return tuple(out)


def _memory(tx: ReadTxn, who: Principal, memory_id: object) -> MemoryRecord | None:
    if not isinstance(memory_id, str):
        return None
    try:
        return tx.get_memory(who.tenant, who.user, memory_id)
    except NotFound:
        return None
