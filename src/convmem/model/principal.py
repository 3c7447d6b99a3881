"""Who a call acts for: a tenant's user, and the actor named in the audit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    tenant: str
    user: str
    actor: str
