"""The session tier: a ``Store`` in front of another (SQLite, PostgreSQL, any registered one)
that keeps each active conversation's request state in Redis, shared by every process.

Reads: ``request_state`` on a conversation's active leaf is answered from Redis when the value
there carries the current generations of its tenant, user and conversation (and this Redis run);
otherwise from the database, and what the request read of it is put back for the next one. The
branch past the cached rows is read from the database as usual.

Writes: every write method of a write transaction passes through ``_TierWrite``, which looks it
up in ``effects.EFFECTS`` *before* the database sees it and marks the scopes it reaches (their
generation moves, their cached entries go, readers bypass them while the transaction is open);
when the transaction ends the generation moves again, and an append or a kept assembly is
written through: the new state goes to Redis in the same script that checks nothing else moved.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from convmem.model.keys import AssemblyRecord
from convmem.store.base import ReadTxn, Store, WriteTxn
from convmem.store.conversations import BranchRow, MessageRow, RequestState
from convmem.store.session.client import Away, Marked, SessionRedis, _token
from convmem.store.session.codec import Cached, branch_row, decode, encode
from convmem.store.session.effects import reach_of
from convmem.store.session.keys import Scope

_log = logging.getLogger(__name__)

# the most rows of a branch one cached value holds (a request reads as far as its budget)
MAX_ROWS = 400
_READS = frozenset(name for name in dir(ReadTxn) if not name.startswith("_"))
_WRITES = frozenset(
    name for name in dir(WriteTxn) if not name.startswith("_") and name not in _READS
)


class SessionTier:
    """``store`` with the session tier of the Redis at ``url`` in front of it."""

    def __init__(self, store: Store, redis: SessionRedis) -> None:
        self.inner = store
        self.redis = redis

    @classmethod
    def open(cls, store: Store, url: str, **options: Any) -> SessionTier:
        return cls(store, SessionRedis(url, **options))

    @contextmanager
    def _read(self) -> Iterator[ReadTxn]:
        with self.inner.read() as inner:
            txn = _TierRead(inner, self.redis)
            yield cast(ReadTxn, txn)
            txn.fill()

    def read(self) -> AbstractContextManager[ReadTxn]:
        return self._read()

    @contextmanager
    def _write(self) -> Iterator[WriteTxn]:
        txn = _TierWrite(self.redis)
        try:
            with self.inner.write() as inner:
                txn.inner = inner
                yield cast(WriteTxn, txn)
        except BaseException:
            txn.close(committed=False)
            raise
        txn.close(committed=True)

    def write(self) -> AbstractContextManager[WriteTxn]:
        return self._write()

    @property
    def reindex_needed(self) -> bool:
        return self.inner.reindex_needed

    def refresh_statistics(self) -> None:
        self.inner.refresh_statistics()

    def close(self) -> None:
        self.inner.close()
        self.redis.close()

    def __getattr__(self, name: str) -> Any:
        # what a backend offers beyond the Protocol (its pool, its URL) stays reachable
        return getattr(self.inner, name)


# --- reads --------------------------------------------------------------------------------------


@dataclass
class _Fill:
    """What a missed request read, to put back when the read ends."""

    tenant: str
    user: str
    conversation_id: str
    tokenizer: str
    tags: tuple[str, str, str]
    run: str
    state: RequestState
    rows: list[BranchRow] = field(default_factory=list)
    complete: bool = False


class _TierRead:
    def __init__(self, inner: ReadTxn, redis: SessionRedis) -> None:
        self._inner = inner
        self._redis = redis
        self._fills: list[_Fill] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def request_state(
        self,
        tenant: str,
        user: str,
        conversation_id: str,
        leaf_id: str | None,
        tokenizer: str,
        reach: int = 0,
    ) -> RequestState:
        inner = self._inner
        if leaf_id is not None:  # another branch than the active one: not what the tier holds
            state = inner.request_state(tenant, user, conversation_id, leaf_id, tokenizer, reach)
            return replace(state, session="bypass")
        try:
            seen = self._redis.read(tenant, user, conversation_id, tokenizer)
        except Away as away:
            self._redis.count("unavailable")
            state = inner.request_state(tenant, user, conversation_id, None, tokenizer, reach)
            return replace(state, session="unavailable", session_problem=away.reason)
        cached = None if seen.payload is None or seen.busy else decode(seen.payload)
        if (
            cached is not None
            and cached.run == seen.run
            and cached.tags == seen.tags
            and cached.user == user
            and cached.conversation.tenant_id == tenant
        ):
            self._redis.count("hit")
            # what the database would have queued with the state it did not have to read
            inner.read_recall_ahead(tenant, user, conversation_id)
            grown = _Fill(tenant, user, conversation_id, tokenizer, seen.tags, seen.run,
                          _state_of(cached), list(cached.rows))  # fmt: skip
            return RequestState(
                conversation=cached.conversation,
                leaf_id=cached.leaf_id,
                pins=list(cached.pins),
                last_assembly=cached.last_assembly,
                branch=self._rest(tenant, cached, tokenizer, grown),
                session="hit",
            )
        state = inner.request_state(tenant, user, conversation_id, None, tokenizer, reach)
        if seen.busy:  # a write is open on it: what we read may be about to change
            self._redis.count("bypass")
            return replace(state, session="bypass")
        self._redis.count("miss")
        fill = _Fill(tenant, user, conversation_id, tokenizer, seen.tags, seen.run, state)
        self._fills.append(fill)
        return replace(state, branch=_recorded(state.branch, fill), session="miss")

    def _rest(
        self, tenant: str, cached: Cached, tokenizer: str, grown: _Fill
    ) -> Iterator[BranchRow]:
        """The cached rows, then (a request reading further back) the database's, which are
        put back with them when the read ends: the next request finds them cached."""
        yield from cached.rows
        if cached.complete or cached.leaf_id is None:
            return
        start = cached.rows[-1].message.parent_id if cached.rows else cached.leaf_id
        if start is None:
            return
        self._fills.append(grown)
        self._redis.count("read_past")
        yield from _recorded(self._inner.branch(tenant, start, tokenizer), grown)

    def fill(self) -> None:
        """Put back what the missed requests read (refused in Redis if a generation moved)."""
        for fill in self._fills:
            state = fill.state
            value = Cached(
                run=fill.run, tags=fill.tags, user=fill.user, conversation=state.conversation,
                leaf_id=state.leaf_id, pins=tuple(state.pins), last_assembly=state.last_assembly,
                rows=tuple(fill.rows), complete=fill.complete or state.leaf_id is None,
            )  # fmt: skip
            try:
                self._redis.fill(
                    fill.tenant, fill.user, fill.conversation_id, fill.tokenizer, fill.tags,
                    encode(value),
                )  # fmt: skip
            except Away:
                return
        self._fills.clear()


def _state_of(cached: Cached) -> RequestState:
    return RequestState(
        cached.conversation, cached.leaf_id, list(cached.pins), cached.last_assembly, iter(())
    )


def _recorded(rows: Iterator[BranchRow], fill: _Fill) -> Iterator[BranchRow]:
    """``rows`` as the request reads them, kept (up to ``MAX_ROWS``) for the fill."""
    for row in rows:
        if len(fill.rows) < MAX_ROWS:
            fill.rows.append(row)
        yield row
    fill.complete = len(fill.rows) < MAX_ROWS


# --- writes -------------------------------------------------------------------------------------

_SIGNATURES = {name: inspect.signature(getattr(WriteTxn, name)) for name in _WRITES}


@dataclass
class _Changes:
    """What a write transaction did to one conversation's cached state, for a write-through."""

    user: str | None = None
    rows: list[MessageRow] = field(default_factory=list)
    leaf: str | None = None
    leaf_moved: bool = False
    assembly: AssemblyRecord | None = None
    other: bool = False  # a change the tier does not write through: read it again


class _TierWrite:
    """A write transaction whose every write method moves the generations it reaches first."""

    def __init__(self, redis: SessionRedis) -> None:
        self.inner: WriteTxn | None = None
        self._redis = redis
        self._marked: dict[Scope, Marked | None] = {}  # None: a user's or tenant's mark
        self._failed: list[Scope] = []  # marks Redis did not take: owed at the end
        self._changes: dict[Scope, _Changes] = {}
        self._tenant: dict[Scope, str] = {}
        self._wide = False  # a user's or tenant's scope moved: no write-through

    def __getattr__(self, name: str) -> Any:
        assert self.inner is not None
        method = getattr(self.inner, name)
        if name in _READS or not callable(method):
            return method

        def through_the_tier(*args: Any, **kwargs: Any) -> Any:
            signature = _SIGNATURES.get(name)
            bound = {} if signature is None else dict(
                signature.bind(None, *args, **kwargs).arguments
            )  # fmt: skip
            self._mark(name, bound)
            return method(*args, **kwargs)

        return through_the_tier

    def _mark(self, name: str, args: dict[str, Any]) -> None:
        for scope in reach_of(name, args):
            self._note(scope, name, args)
            if scope in self._marked or scope in self._failed:
                continue
            try:
                if scope.kind == "conversation":
                    user = args.get("user")
                    self._tenant[scope] = args["tenant"]
                    self._marked[scope] = self._redis.mark_conversation(scope, args["tenant"], user)
                else:
                    self._redis.mark_set(scope)
                    self._marked[scope] = None
            except Away:
                self._failed.append(scope)

    def _note(self, scope: Scope, name: str, args: dict[str, Any]) -> None:
        if scope.kind != "conversation":
            self._wide = True
            return
        changes = self._changes.setdefault(scope, _Changes())
        if "user" in args:
            if changes.user not in (None, args["user"]):
                changes.other = True
            changes.user = args["user"]
        if name == "insert_messages":
            changes.rows.extend(args["rows"])
        elif name == "set_active_leaf":
            changes.leaf, changes.leaf_moved = args["leaf_id"], True
        elif name == "put_last_assembly":
            changes.assembly = args["record"]
        else:
            changes.other = True

    def close(self, *, committed: bool) -> None:
        """The transaction ended: every marked scope's generation moves again (written through
        where it can be); what Redis did not take is owed."""
        owed: list[tuple[Scope, bool]] = [(scope, False) for scope in self._failed]
        for scope, marked in self._marked.items():
            try:
                if marked is None:
                    self._redis.unmark_set(scope)
                    continue
                changes = self._changes.get(scope, _Changes())
                new = _token()
                through = self._through(marked, changes, new) if committed else None
                done = self._redis.unmark_conversation(
                    marked, self._tenant[scope], changes.user, through, new
                )
                if done:
                    self._redis.count("write_through")
            except Away:
                owed.append((scope, True))
        if owed:
            self._redis.owe(owed)

    def _through(self, marked: Marked, changes: _Changes, new: str) -> dict[str, str] | None:
        """The cached state after this transaction's changes, per tokenizer (None: read it
        again instead)."""
        if self._wide or changes.other or marked.others or changes.user is None:
            return None
        if not marked.fields or marked.run != self._redis.run:
            return None
        out: dict[str, str] = {}
        before = (marked.tenant_generation, marked.user_generation, marked.old)
        for tokenizer, payload in marked.fields.items():
            cached = decode(payload)
            if cached is None or cached.tags != before or cached.user != changes.user:
                return None
            after = _after(cached, changes, tokenizer)
            if after is None:
                return None
            out[tokenizer] = encode(
                replace(after, tags=(before[0], before[1], new), run=self._redis.run)
            )
        return out


def _after(cached: Cached, changes: _Changes, tokenizer: str) -> Cached | None:
    """``cached`` with an append (rows, the leaf moved onto them) and a kept assembly."""
    out = cached
    if changes.rows or changes.leaf_moved:
        if not changes.leaf_moved or changes.leaf is None:
            return None
        new_rows = [branch_row(row, tokenizer) for row in changes.rows]
        grown = cached.appended(new_rows, changes.leaf)
        if grown is None:
            return None
        out = grown
        # as many tokens back as the state held (what requests read), the new rows on top
        reach = sum(row.estimate_tokens for row in cached.rows)
        kept, covered = 0, 0
        for row in out.rows:
            if kept >= MAX_ROWS or (covered >= reach and kept >= len(new_rows)):
                break
            kept, covered = kept + 1, covered + row.estimate_tokens
        if kept < len(out.rows):
            out = replace(out, rows=out.rows[:kept], complete=False)
    if changes.assembly is not None:
        out = replace(out, last_assembly=changes.assembly)
    return out
