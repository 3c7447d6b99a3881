"""API keys and the record of a conversation's last assembled request: values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

KeyRole = Literal["app", "user", "admin"]
KEY_ROLES: tuple[str, ...] = get_args(KeyRole)


@dataclass(frozen=True)
class ApiKey:
    """A key's identity and what it may do; the secret itself is never held here.

    ``app``: acts for any user of its tenant (the caller names the user per request);
    ``user``: acts only for ``user_id``; ``admin``: manages the tenant's keys and policy.
    ``purposes``: the memory purposes requests made with the key may use (None: every one).
    """

    id: str
    tenant_id: str
    role: KeyRole
    user_id: str | None
    name: str | None
    created_by: str
    created_at: datetime
    revoked_at: datetime | None = None
    purposes: tuple[str, ...] | None = None

    @property
    def held_by_end_user(self) -> bool:
        """A user key: the end user holds it, so what it writes is the user's data and never
        the application's instructions (no system messages; its pins are the user's requests)
        — on every surface that takes keys (the HTTP service, MCP over HTTP)."""
        return self.role not in ("app", "admin")

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tenant_id": self.tenant_id,
            "role": self.role,
            "user_id": self.user_id,
            "name": self.name,
            "created_by": self.created_by,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "purposes": list(self.purposes) if self.purposes is not None else None,
        }


@dataclass(frozen=True)
class AssemblyRecord:
    """The report of the last request assembled for a conversation, kept for inspection.

    ``report`` is ``AssemblyReport.to_dict()``: token counts, message / memory ids and the
    digests of the request's parts (``convmem.context.prompt_cache``), never content, so keeping it
    stores nothing that is not already in the messages table.
    """

    conversation_id: str
    leaf_id: str | None
    at: datetime
    report: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "leaf_id": self.leaf_id,
            "at": self.at.isoformat(),
            "report": dict(self.report),
        }
