"""API keys and tenant policy: the few rows an administrator writes.

A presented key names no tenant, so ``find_api_key`` looks a key up by id alone — key ids are
globally unique. Everything else is per tenant; another tenant's key is ``NotFound``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from convmem.model.keys import ApiKey
from convmem.model.page_sessions import PageSession
from convmem.model.policy import TenantPolicy


@dataclass(frozen=True)
class StoredKey:
    """A key with the SHA-256 (hex) of its secret: the secret itself is never stored."""

    key: ApiKey
    secret_sha256: str


class KeyReads(Protocol):
    def find_api_key(self, key_id: str) -> StoredKey | None: ...

    def list_api_keys(self, tenant: str) -> list[ApiKey]:
        """The tenant's keys by id, revoked ones too."""
        ...


class KeyWrites(Protocol):
    def insert_api_key(self, tenant: str, key: ApiKey, secret_sha256: str) -> None: ...

    def revoke_api_key(self, tenant: str, key_id: str, at: datetime) -> ApiKey:
        """Mark the tenant's key revoked (a revoked key keeps its first revocation time);
        ``NotFound`` for another tenant's. Returns the key."""
        ...


@dataclass(frozen=True)
class StoredPageSession:
    """A page session with the SHA-256 (hex) of its token's secret."""

    session: PageSession
    secret_sha256: str


class PageSessionReads(Protocol):
    def find_page_session(self, tenant: str, session_id: str) -> StoredPageSession | None: ...


class PageSessionWrites(Protocol):
    def insert_page_session(self, session: PageSession, secret_sha256: str) -> None: ...

    def end_page_session(self, tenant: str, session_id: str, at: datetime) -> bool:
        """End it (a link used, a session signed out); True only for the call that ended it,
        so two requests presenting one link cannot both use it."""
        ...

    def touch_page_session(self, tenant: str, session_id: str, at: datetime) -> None:
        """Record a request of the session (its idle time starts again)."""
        ...


class TenantPolicyReads(Protocol):
    def tenant_memory_disabled(self, tenant: str) -> bool:
        """The administrator's switch; False for a tenant that never set a policy."""
        ...

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        """The tenant's policy (the defaults for a tenant that never set one)."""
        ...

    def tenant_policies(self) -> list[TenantPolicy]:
        """Every tenant that set a retention period for some layer, by tenant id."""
        ...


class TenantPolicyWrites(Protocol):
    def set_tenant_policy(self, policy: TenantPolicy, at: datetime) -> None:
        """Replace the tenant's whole policy."""
        ...
