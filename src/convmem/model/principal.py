"""Who a call acts for: a tenant's user, the actor named in the audit, and the memory purposes
the call may use (``None``: every purpose; see ``convmem.model.purpose``)."""

from __future__ import annotations

from dataclasses import dataclass

from convmem.model.purpose import Allowed


@dataclass(frozen=True)
class Principal:
    tenant: str
    user: str
    actor: str
    purposes: Allowed = None
