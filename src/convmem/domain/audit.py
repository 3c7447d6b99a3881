"""The audit trail's one writer: what happened to which object, by whom, when — never what it
said (DESIGN 12)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from convmem.ids import new_id
from convmem.model.memory import AuditEvent
from convmem.model.principal import Principal
from convmem.store.base import WriteTxn


def audit(tx: WriteTxn, who: Principal, action: str, kind: str, object_id: str,
          **details: Any) -> None:  # fmt: skip
    at = datetime.now(UTC)
    tx.insert_audit(who.tenant, AuditEvent(new_id("aud"), who.user, who.actor, action, kind,
                                           object_id, at, details))  # fmt: skip
