"""Sign-in links and page sessions: how an application sends one of its users to their memory
page without handing the browser an API key.

The application (with its app key) mints a link for a user: short-lived (10 minutes) and single
use. Opening it ends the link and starts a session whose token the service keeps in an HttpOnly,
SameSite=Strict cookie, so the page's script never holds a credential. A session ends when signed
out, after ``SESSION_IDLE`` without a request, or at ``SESSION_LIFETIME`` whatever happens.

A token reads ``cmp_<tenant, base64url>.<26-char id>_<43-char secret>``: the tenant and id find
the stored row (every row is per tenant), the secret's SHA-256 is compared in constant time, as
for API keys (``convmem.domain.keys``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from convmem.ids import new_id
from convmem.model.page_sessions import PageSession, PageSessionKind
from convmem.model.tree import check_identifier
from convmem.store.base import Store
from convmem.store.retry import write_retried

LINK_LIFETIME = timedelta(minutes=10)
SESSION_IDLE = timedelta(minutes=30)
SESSION_LIFETIME = timedelta(hours=12)
# a session's last request is written at most this often (not one write per request)
_TOUCH_EVERY = timedelta(minutes=1)
TOKEN_PREFIX = "cmp_"
_SECRET_CHARS = 43  # token_urlsafe(32)
_ID_CHARS = len("pgs_") + 26
_DUMMY_HASH = hashlib.sha256(b"convmem: no such page session").hexdigest()


class _HasStore(Protocol):
    @property
    def store(self) -> Store: ...


@dataclass(frozen=True)
class IssuedToken:
    """A new link or session: ``token`` is shown once and never stored."""

    session: PageSession
    token: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _tenant_part(tenant: str) -> str:
    return base64.urlsafe_b64encode(tenant.encode("utf-8")).decode("ascii").rstrip("=")


def parse_token(token: str) -> tuple[str, str, str] | None:
    """(tenant, session id, secret) of a well-formed token, else None."""
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 2000:
        return None
    tenant_part, dot, rest = token[len(TOKEN_PREFIX) :].partition(".")
    # the id is fixed-width; the secret may hold "_" itself
    session_id, underscore, secret = (
        rest[:_ID_CHARS],
        rest[_ID_CHARS : _ID_CHARS + 1],
        rest[_ID_CHARS + 1 :],
    )
    if not dot or underscore != "_" or len(secret) != _SECRET_CHARS or not secret.isascii():
        return None
    try:
        padded = tenant_part + "=" * (-len(tenant_part) % 4)
        tenant = base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None
    if not tenant or not session_id.startswith("pgs_"):
        return None
    return tenant, session_id, secret


class PageSessions:
    """The sign-in links and page sessions of a database."""

    def __init__(self, memory: _HasStore) -> None:
        self._memory = memory

    def _issue(self, tenant: str, user: str, kind: PageSessionKind, life: timedelta) -> IssuedToken:
        now = datetime.now(UTC)
        secret = secrets.token_urlsafe(32)
        session = PageSession(new_id("pgs"), tenant, user, kind, now, now + life, now)
        write_retried(self._memory.store, lambda tx: tx.insert_page_session(session, _hash(secret)))
        return IssuedToken(session, f"{TOKEN_PREFIX}{_tenant_part(tenant)}.{session.id}_{secret}")

    def mint_link(self, tenant: str, user: str) -> IssuedToken:
        """A sign-in link's token for ``user``: it works once, within ``LINK_LIFETIME``."""
        tenant = check_identifier(tenant, "tenant")
        user = check_identifier(user, "user")
        return self._issue(tenant, user, "link", LINK_LIFETIME)

    def _find(self, token: str, kind: PageSessionKind) -> PageSession | None:
        """The live row ``token`` presents (right secret, not ended, not expired), or None."""
        parsed = parse_token(token)
        if parsed is None:
            return None
        tenant, session_id, secret = parsed
        with self._memory.store.read() as tx:
            found = tx.find_page_session(tenant, session_id)
        matches = hmac.compare_digest(_hash(secret), found.secret_sha256 if found else _DUMMY_HASH)
        if found is None or not matches:
            return None
        session, now = found.session, datetime.now(UTC)
        if session.kind != kind or session.ended_at is not None or now >= session.expires_at:
            return None
        if kind == "session" and now - session.last_seen_at >= SESSION_IDLE:
            return None
        return session

    def exchange(self, link_token: str) -> IssuedToken | None:
        """Use a link: it ends (whoever presents it next is refused) and a session starts.
        None for a link that is unknown, used or expired."""
        link = self._find(link_token, "link")
        if link is None:
            return None
        now = datetime.now(UTC)
        used = write_retried(
            self._memory.store, lambda tx: tx.end_page_session(link.tenant_id, link.id, now)
        )
        if not used:  # another request used it first
            return None
        return self._issue(link.tenant_id, link.user_id, "session", SESSION_LIFETIME)

    def authenticate(self, session_token: str) -> PageSession | None:
        """The live session ``session_token`` presents, its idle time started again; or None."""
        session = self._find(session_token, "session")
        if session is None:
            return None
        now = datetime.now(UTC)
        if now - session.last_seen_at >= _TOUCH_EVERY:
            write_retried(
                self._memory.store,
                lambda tx: tx.touch_page_session(session.tenant_id, session.id, now),
            )
        return session

    def end(self, session_token: str) -> None:
        """Sign out: the session stops working at once (an unknown token: nothing to do)."""
        session = self._find(session_token, "session")
        if session is not None:
            now = datetime.now(UTC)
            write_retried(
                self._memory.store,
                lambda tx: tx.end_page_session(session.tenant_id, session.id, now),
            )
