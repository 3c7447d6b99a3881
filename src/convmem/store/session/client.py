"""The session tier's Redis side: the scripts' calls, a time limit on each, and what happens when
Redis is away.

Redis away is not an outage. A call that fails or runs past ``timeout`` raises ``Away`` (the
caller falls back to the database) and the tier stays away for ``retry_after`` seconds, so
requests do not each wait out the limit. A write whose generation could not be moved is owed:
the move is replayed before this process uses the tier again. A Redis server that restarted
(another ``run_id``) invalidates every value cached before, even one restored from a snapshot.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from convmem.errors import BackendUnavailable, InvalidInput
from convmem.store.session import scripts
from convmem.store.session.keys import (
    EVERYTHING,
    PREFIX,
    Scope,
    conversation_scope,
    entries_of,
    entry_key,
    tenant_scope,
    user_scope,
)

# outcomes counted (``SessionRedis.counts``) and reported on requests
OUTCOMES = ("hit", "miss", "bypass", "unavailable")


class Away(Exception):
    """Redis did not answer in time (or at all): the request goes to the database."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Read:
    """What a reader saw: the generations (tenant, user, conversation), whether a writer is
    open on any of them, and the cached value's text (None: nothing cached)."""

    tags: tuple[str, str, str]
    busy: bool
    payload: bytes | None
    run: str


@dataclass
class Marked:
    """A write transaction's mark on a conversation: the generation it set, and the state
    before it (for a write-through): the tenant's and user's generations, whether another
    writer was open, the cached fields (tokenizer → payload)."""

    scope: Scope
    generation: str
    old: str
    tenant_generation: str
    user_generation: str
    others: bool
    fields: dict[str, bytes] = field(default_factory=dict)
    run: str = ""


def _token() -> str:
    return secrets.token_hex(8)


class SessionRedis:
    """One process's connection pool to the tier's Redis, and its scripts."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 0.25,
        retry_after: float = 1.0,
        entry_ttl: int = 1800,
        marker_ttl: int = 60,
    ) -> None:
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:  # pragma: no cover - the redis extra
            raise BackendUnavailable(
                "the session tier needs the redis extra: pip install 'convmem[redis]'"
            ) from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            self._redis = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
                redis_connect_func=self._connected,
            )
        except ValueError as exc:
            raise InvalidInput(f"the session URL is not a Redis URL: {exc}") from None
        self.timeout = timeout
        self.retry_after = retry_after
        self.entry_ttl = entry_ttl
        # a generation outlives the values tagged with it (a new token would refuse them anyway)
        self.gen_ttl = entry_ttl * 2
        self.marker_ttl = marker_ttl
        self.run = ""
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._owed: list[tuple[Scope, bool]] = []
        self._scripts = {
            name: self._redis.register_script(getattr(scripts, name))
            for name in ("READ", "FILL", "MARK_CONVERSATION", "MARK_SET",
                         "UNMARK_CONVERSATION", "UNMARK_SET")
        }  # fmt: skip

    def _connected(self, connection: Any) -> None:
        """Each new connection: the usual handshake, then the server's run id (a restarted
        server has a new one, and whatever it holds from before is not trusted)."""
        connection.on_connect()
        connection.send_command("INFO", "server")
        info = connection.read_response()
        text = info.decode() if isinstance(info, bytes) else str(info)
        for line in text.splitlines():
            if line.startswith("run_id:"):
                self.run = line.partition(":")[2].strip()

    def count(self, outcome: str) -> None:
        with self._lock:
            self.counts[outcome] += 1

    # --- guarded calls --------------------------------------------------------------------------

    def _call(self, name: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        self._ready()
        try:
            return self._scripts[name](keys=list(keys), args=list(args))
        except self._errors as exc:
            self._went_away()
            raise Away(_reason(exc, self.timeout)) from None

    def _ready(self) -> None:
        """Raise ``Away`` while the tier is away; replay what this process owes first."""
        with self._lock:
            if time.monotonic() < self._down_until:
                raise Away("unavailable")
            owed, self._owed = self._owed, []
        for index, (scope, decrement) in enumerate(owed):
            try:
                self._unmark(scope, decrement)
            except self._errors as exc:
                with self._lock:
                    self._owed[:0] = owed[index:]
                self._went_away()
                raise Away(_reason(exc, self.timeout)) from None

    def _went_away(self) -> None:
        with self._lock:
            self._down_until = time.monotonic() + self.retry_after

    def owe(self, scopes: Sequence[tuple[Scope, bool]]) -> None:
        """Moves that could not be made now: made before this process next uses the tier."""
        with self._lock:
            self._owed.extend(scopes)
            self.counts["owed"] += len(scopes)

    @property
    def owed(self) -> int:
        with self._lock:
            return len(self._owed)

    # --- readers --------------------------------------------------------------------------------

    def read(self, tenant: str, user: str, conversation_id: str, tokenizer: str) -> Read:
        keys = _entry_keys(tenant, user, conversation_id)
        got = self._call(
            "READ", keys,
            [tokenizer, _token(), _token(), _token(), self.gen_ttl, self.entry_ttl],
        )  # fmt: skip
        tags = (_text(got[0]), _text(got[1]), _text(got[2]))
        payload = got[4] if got[4] else None
        return Read(tags, bool(int(got[3])), payload, self.run)

    def fill(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        tokenizer: str,
        tags: tuple[str, str, str],
        payload: str,
    ) -> bool:
        keys = _entry_keys(tenant, user, conversation_id)
        stored = self._call("FILL", keys, [*tags, tokenizer, payload, self.entry_ttl])
        return bool(stored)

    # --- writers --------------------------------------------------------------------------------

    def mark_conversation(self, scope: Scope, tenant: str, user: str | None) -> Marked:
        """Open a write on a conversation; what was cached for it goes (and comes back to the
        caller, for a write-through)."""
        new = _token()
        t, u = tenant_scope(tenant), user_scope(tenant, user or "")
        keys = [scope.generation, scope.writers, f"{scope.base}:s",
                t.generation, t.writers, u.generation, u.writers]  # fmt: skip
        got = self._call("MARK_CONVERSATION", keys, [new, self.marker_ttl, self.gen_ttl])
        pairs = got[4:]
        fields = {_text(pairs[i]): pairs[i + 1] for i in range(0, len(pairs), 2)}
        return Marked(
            scope, new, _text(got[1]), _text(got[2]), _text(got[3]), int(got[0]) > 0, fields,
            self.run,
        )  # fmt: skip

    def mark_set(self, scope: Scope) -> None:
        """Open a write on a user or a tenant (or everything): their cached entries go now."""
        if scope is EVERYTHING:
            self._ready()
            self._drop_everything()
            return
        keys = [scope.generation, scope.writers, entries_of(scope)]
        self._call("MARK_SET", keys, [_token(), self.marker_ttl, self.gen_ttl])

    def unmark_conversation(
        self,
        marked: Marked,
        tenant: str,
        user: str | None,
        through: dict[str, str] | None,
        new_generation: str,
    ) -> bool:
        """Close a write: the generation moves again; ``through`` (tokenizer → payload tagged
        with ``new_generation``) is stored when nothing else moved since the mark."""
        pairs = [item for pair in (through or {}).items() for item in pair]
        got = self._call(
            "UNMARK_CONVERSATION",
            _unmark_keys(marked.scope, tenant, user),
            [marked.generation, new_generation, self.gen_ttl, marked.tenant_generation,
             marked.user_generation, self.entry_ttl, "1", *pairs],
        )  # fmt: skip
        return bool(got)

    def unmark_set(self, scope: Scope, decrement: bool = True) -> None:
        self._ready()
        try:
            self._unmark(scope, decrement)
        except self._errors as exc:
            self._went_away()
            raise Away(_reason(exc, self.timeout)) from None

    def _unmark(self, scope: Scope, decrement: bool) -> None:
        """Move ``scope``'s generation and drop what it cached (unguarded: callers guard)."""
        flag = "1" if decrement else "0"
        if scope is EVERYTHING:
            self._drop_everything()
        elif scope.kind == "conversation":
            keys = _unmark_keys(scope, "", None)
            self._scripts["UNMARK_CONVERSATION"](
                keys=keys, args=["", _token(), self.gen_ttl, "", "", self.entry_ttl, flag]
            )
        else:
            keys = [scope.generation, scope.writers, entries_of(scope)]
            self._scripts["UNMARK_SET"](keys=keys, args=[_token(), self.gen_ttl, flag])

    def _drop_everything(self) -> None:
        for key in self._redis.scan_iter(match=f"{PREFIX}:*", count=1000):
            self._redis.delete(key)

    # --- inspection -----------------------------------------------------------------------------

    def key_names(self) -> list[bytes]:
        """Every key the tier holds (tests and the residue check)."""
        return list(self._redis.scan_iter(match=f"{PREFIX}:*", count=1000))

    def contents(self) -> bytes:
        """Every key the tier holds with its whole value, as bytes (the residue check: what a
        delete must leave no trace of). Read by type, not with ``DUMP``, whose compression
        could hide a text from a byte search."""
        out = []
        for key in self.key_names():
            kind = self._redis.type(key)
            if kind == b"string":
                values = [self._redis.get(key)]
            elif kind == b"hash":
                values = [b for pair in self._redis.hgetall(key).items() for b in pair]
            elif kind == b"set":
                values = list(self._redis.smembers(key))
            else:
                values = [self._redis.dump(key)]
            out.append(b"\0".join([key, *(v for v in values if isinstance(v, bytes))]))
        return b"\n".join(out)

    def close(self) -> None:
        self._redis.close()


def _entry_keys(tenant: str, user: str, conversation_id: str) -> list[str]:
    t, u = tenant_scope(tenant), user_scope(tenant, user)
    c = conversation_scope(tenant, conversation_id)
    return [t.generation, t.writers, u.generation, u.writers, c.generation, c.writers,
            entry_key(tenant, conversation_id), entries_of(u), entries_of(t)]  # fmt: skip


def _unmark_keys(scope: Scope, tenant: str, user: str | None) -> list[str]:
    t, u = tenant_scope(tenant), user_scope(tenant, user or "")
    return [scope.generation, scope.writers, f"{scope.base}:s", t.generation, u.generation,
            t.writers, u.writers, entries_of(u), entries_of(t)]  # fmt: skip


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException, timeout: float) -> str:
    """How the report names Redis's absence: its limit, or the class of its error."""
    name = type(exc).__name__
    if "Timeout" in name:
        return f"timeout {round(timeout * 1000)} ms"
    return f"error {name}"
