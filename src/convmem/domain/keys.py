"""API keys: issued once, stored hashed, verified in constant time, bound to a tenant and a role.

A key reads ``cmk_<26-char id>_<43-char secret>``. The id finds the stored row; the secret, 256
random bits, is kept only as its SHA-256 — a slow password hash buys nothing against a secret
that cannot be guessed — and compared with ``hmac.compare_digest``. The principal a request acts
for comes from the key alone.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import quote, unquote

from convmem.errors import InvalidInput
from convmem.ids import new_id
from convmem.model.keys import KEY_ROLES, ApiKey, KeyRole
from convmem.model.purpose import check_purposes
from convmem.model.tree import check_identifier, check_text
from convmem.store.base import Store
from convmem.store.keys import StoredKey
from convmem.store.retry import conflicts_retried, write_retried

TOKEN_PREFIX = "cmk_"
USER_HEADER = "X-Convmem-User"  # where a request made with an app key names its user
_ID_PREFIX = "key_"
_ID_CHARS = 26
_SECRET_CHARS = 43  # token_urlsafe(32)
_CROCKFORD = frozenset("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
# compared against when the id is unknown, so a miss costs what a hit costs
_DUMMY_HASH = hashlib.sha256(b"convmem: no such key").hexdigest()


class KeyRefused(Exception):
    """A valid key asked for something its role does not allow; ``status`` is the HTTP answer."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def named_user(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The user a request names in ``X-Convmem-User``, from its raw (ASGI) headers; None when
    it names none. HTTP carries header values as bytes that servers decode as Latin-1, so the
    header is ASCII and a user id outside it is sent percent-encoded as UTF-8 (``%C5%81ukasz``
    for ``Łukasz``; ``user_header_value`` makes it, and a literal ``%`` is ``%25``). The header
    is refused (400) when it comes twice (or two values merged with a comma, as a proxy may),
    holds raw non-ASCII bytes or a percent-escape that is not UTF-8: read any other way, one
    client's id would become a different principal. Shared by the HTTP service and the MCP
    server, so both read the same header the same way."""
    wanted = USER_HEADER.lower().encode("ascii")
    values = [value for name, value in headers if name.lower() == wanted]
    if not values:
        return None
    if len(values) > 1:
        raise KeyRefused(400, "invalid_user_header", f"{USER_HEADER} is sent more than once")
    try:
        text = values[0].decode("ascii")
    except UnicodeDecodeError:
        raise KeyRefused(
            400, "invalid_user_header",
            f"{USER_HEADER} holds non-ASCII bytes: send a user id outside ASCII "
            "percent-encoded as UTF-8",
        ) from None  # fmt: skip
    if "," in text:
        raise KeyRefused(
            400, "invalid_user_header",
            f"{USER_HEADER} holds a comma (two values merged?): percent-encode it as %2C",
        )  # fmt: skip
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise KeyRefused(
            400, "invalid_user_header", f"{USER_HEADER} is not percent-encoded UTF-8"
        ) from None


def user_header_value(user: str) -> str:
    """``user`` as an ``X-Convmem-User`` value: every byte outside ASCII letters, digits and
    ``-._~`` percent-encoded from UTF-8 (what ``named_user`` reads back)."""
    return quote(user, safe="")


def acting_user(key: ApiKey, named: str | None) -> str:
    """The user a request made with ``key`` acts for: a user key's own user, or the user an app
    key names (``named``, from the caller's header). An admin key acts for no user. Shared by
    every interface that takes API keys (the HTTP service, the MCP server)."""
    if key.role == "admin":
        raise KeyRefused(403, "forbidden", "an admin key manages keys; it cannot act for users")
    if key.role == "user":
        if named is not None and named != key.user_id:
            raise KeyRefused(403, "user_mismatch", "a user key acts only for its own user")
        assert key.user_id is not None
        return key.user_id
    if named is None:
        raise KeyRefused(
            400, "user_required", f"an application key names the user in {USER_HEADER}"
        )
    try:
        return check_identifier(named, "user")
    except InvalidInput as exc:
        raise KeyRefused(400, "invalid_identifier", str(exc)) from exc


@dataclass(frozen=True)
class IssuedKey:
    """A newly created key: ``token`` is shown once and never stored."""

    key: ApiKey
    token: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def parse_token(token: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed token, else None."""
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
        return None
    body = token[len(TOKEN_PREFIX) :]
    if len(body) != _ID_CHARS + 1 + _SECRET_CHARS or body[_ID_CHARS] != "_":
        return None
    ulid, secret = body[:_ID_CHARS], body[_ID_CHARS + 1 :]
    if not set(ulid) <= _CROCKFORD or not secret.isascii():
        return None
    return _ID_PREFIX + ulid, secret


class _HasStore(Protocol):
    """What the keys use of the database (``convmem.engine.Memory``): its store alone."""

    @property
    def store(self) -> Store: ...


# How long a process trusts a key record it has read. A key revoked through this process (or its
# tenant erased) stops at once: that drops it. One revoked by another process (another service
# worker, the CLI) stops within this many seconds.
KEY_CACHE_SECONDS = 5.0
_KEY_CACHE_SIZE = 4096


class KeyCache:
    """The key records this process found, by key id, for ``seconds``: a request on a key in
    use authenticates without reading the store (the secret is still checked every time)."""

    def __init__(
        self,
        seconds: float = KEY_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._seconds = seconds
        self._clock = clock
        self._found: dict[str, tuple[float, StoredKey]] = {}
        self._lock = threading.Lock()

    def get(self, key_id: str) -> StoredKey | None:
        with self._lock:
            entry = self._found.get(key_id)
            if entry is None:
                return None
            if self._clock() - entry[0] >= self._seconds:
                del self._found[key_id]
                return None
            return entry[1]

    def put(self, found: StoredKey) -> None:
        with self._lock:
            if len(self._found) >= _KEY_CACHE_SIZE:  # the oldest read goes first
                del self._found[next(iter(self._found))]
            self._found[found.key.id] = (self._clock(), found)

    def drop(self, key_id: str) -> None:
        with self._lock:
            self._found.pop(key_id, None)

    def drop_tenant(self, tenant: str) -> None:
        with self._lock:
            for key_id in [k for k, (_, f) in self._found.items() if f.key.tenant_id == tenant]:
                del self._found[key_id]


class ApiKeys:
    """The keys of a database: ``Memory.keys``."""

    def __init__(self, memory: _HasStore, cache: KeyCache | None = None) -> None:
        self._memory = memory
        self._cache = cache or KeyCache(seconds=0.0)

    def create(
        self,
        tenant: str,
        role: str,
        *,
        user: str | None = None,
        name: str | None = None,
        created_by: str = "cli",
        purposes: Iterable[str] | None = None,
    ) -> IssuedKey:
        """Issue a key. A ``user`` key needs ``user``; ``app`` and ``admin`` keys take none.
        ``purposes`` caps the memory purposes its requests may recall and search (default:
        every purpose); an admin key acts for no user, so it takes none."""
        tenant = check_identifier(tenant, "tenant")
        if role not in KEY_ROLES:
            raise InvalidInput(f"role must be one of {', '.join(KEY_ROLES)}")
        if role == "user":
            user = check_identifier(user, "user")
        elif user is not None:
            raise InvalidInput(f"an {role} key is not bound to a user")
        if name is not None and (not isinstance(name, str) or len(name) > 200):
            raise InvalidInput("a key's name is a string of at most 200 characters")
        if name is not None:
            check_text(name, max_bytes=800, what="a key's name")
        allowed = None if purposes is None else check_purposes(purposes, "a key's purposes")
        if allowed is not None and role == "admin":
            raise InvalidInput("an admin key acts for no user: it takes no purposes")
        key_id = new_id("key")
        secret = secrets.token_urlsafe(32)
        assert len(secret) == _SECRET_CHARS
        role_value: KeyRole = role  # type: ignore[assignment]
        key = ApiKey(key_id, tenant, role_value, user, name, created_by, datetime.now(UTC),
                     purposes=allowed)  # fmt: skip
        write_retried(self._memory.store, lambda tx: tx.insert_api_key(tenant, key, _hash(secret)))
        return IssuedKey(key, f"{TOKEN_PREFIX}{key_id[len(_ID_PREFIX) :]}_{secret}")

    def authenticate(self, token: str) -> ApiKey | None:
        """The active key ``token`` presents, or None (malformed, unknown, wrong or revoked)."""
        parsed = parse_token(token)
        if parsed is None:
            return None
        key_id, secret = parsed
        found = self._cache.get(key_id)
        if found is None:
            with self._memory.store.read() as tx:
                found = tx.find_api_key(key_id)
            if found is not None and found.key.active:
                self._cache.put(found)
        stored = found.secret_sha256 if found else _DUMMY_HASH
        matches = hmac.compare_digest(_hash(secret), stored)
        if found is None or not matches or not found.key.active:
            return None
        return found.key

    def list(self, tenant: str) -> builtins.list[ApiKey]:
        """Every key of the tenant, revoked ones too (ids and roles; never secrets)."""
        tenant = check_identifier(tenant, "tenant")
        with self._memory.store.read() as tx:
            return tx.list_api_keys(tenant)

    @conflicts_retried
    def revoke(self, tenant: str, key_id: str) -> ApiKey:
        """Revoke one of the tenant's keys; it stops working at once. Idempotent."""
        tenant = check_identifier(tenant, "tenant")
        key_id = check_identifier(key_id, "key id")
        self._cache.drop(key_id)
        try:
            with self._memory.store.write() as tx:
                return tx.revoke_api_key(tenant, key_id, datetime.now(UTC))
        finally:  # and again: a request may have read it back meanwhile
            self._cache.drop(key_id)
