"""LangGraph's long-term memory on convmem (the ``langgraph`` extra): ``ConvmemStore``.

A ``BaseStore`` whose items are convmem memories of one tenant, so every write passes the
never-store policy and the consent rules and every item shows on the user's memory page:

- namespace ``(user, *path)``: the first element is the user the item belongs to; the rest is
  its scope — ``(user,)`` is the user's own scope ``"user"`` (recalled in every conversation),
  ``(user, "trip", "lisbon")`` the scope ``"project:trip/lisbon"``;
- key: the memory's subject, so a put on a key replaces the value that key held (the older
  record is superseded, or, for a proposal, withdrawn). Keys are compared without case;
- value: ``{"text": …}`` (optionally ``"category"``) is stored as that text; any other JSON
  object is stored as its JSON text, and read back as the same object;
- ``ttl`` (minutes) sets the memory's expiry; a read does not extend it.

Consent: a graph's writes are the model's inferences, so by default they are *proposals* — on
the memory page for the user to confirm or reject, readable by the graph meanwhile, never
recalled into a prompt or ranked by a ``query`` search until confirmed (``get``
and a search without a query list them). A graph that stores only what users explicitly asked
for passes ``explicit=True``. A write the policy refuses (a credential, a health detail, memory
switched off) raises ``NeverStoreViolation`` with the reason and stores nothing; the operations
of a batch before it stay done.
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from convmem.errors import BackendUnavailable

try:
    import langgraph  # noqa: F401
except ImportError as exc:  # named, not a bare ModuleNotFoundError
    raise BackendUnavailable(
        "convmem.integrations.langgraph needs the langgraph extra: pip install 'convmem[langgraph]'"
    ) from exc

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from convmem.engine import Memory, Scope
from convmem.errors import InvalidInput
from convmem.model.memory import MemoryRecord

_PROJECT = "project:"
_SEPARATOR = "/"
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt,
    "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}  # fmt: skip


class ConvmemStore(BaseStore):
    """LangGraph's ``BaseStore`` on the long-term memories of one convmem tenant."""

    supports_ttl = True

    def __init__(self, memory: Memory, tenant: str, *, explicit: bool = False) -> None:
        self.memory = memory
        self.tenant = tenant
        self.explicit = explicit

    # --- the two entry points -------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidInput(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The same operations in a worker thread: the event loop is never blocked."""
        return await asyncio.to_thread(self.batch, list(ops))

    # --- operations -----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        scope, name = self._where(op.namespace)
        record = _current(scope, name, op.key)
        return None if record is None else _item(record)

    def _put(self, op: PutOp) -> None:
        scope, name = self._where(op.namespace)
        existing = _current(scope, name, op.key)
        if op.value is None:
            if existing is not None:
                scope.memories.delete(existing.id)
            return
        text, category = _text_of(op.value)
        expires = None if op.ttl is None else datetime.now(UTC) + timedelta(minutes=op.ttl)
        write = scope.remember if self.explicit else scope.propose
        notice = write(text, category=category, subject=op.key, scope=name, expires_at=expires,
                       strict=True)  # fmt: skip
        saved = notice.memory
        pending = existing is not None and existing.status == "proposed" and not self.explicit
        if pending and saved is not None and existing is not None and saved.id != existing.id:
            scope.memories.reject(existing.id)  # the graph's new value replaces its pending one

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if not op.namespace_prefix:
            raise InvalidInput("a search names the user: namespace_prefix=(user, …)")
        user, *path = op.namespace_prefix
        scope = self._scope(user)
        records = [
            r for r in scope.memories.list()
            if _path_of(r.scope)[: len(path)] == tuple(path)
            and _matches(_value_of(r), op.filter or {})
        ]  # fmt: skip
        scores: dict[str, float] = {}
        if op.query:
            for name in sorted({r.scope for r in records}):
                extra = None if name == "user" else name
                for hit in scope.search_memories(op.query, k=len(records), scope=extra):
                    scores[hit.memory.id] = max(scores.get(hit.memory.id, 0.0), hit.score)
            records = [r for r in records if r.id in scores]
            records.sort(key=lambda r: scores[r.id], reverse=True)
        else:
            records.sort(key=lambda r: r.updated_at, reverse=True)
        page = records[op.offset : op.offset + op.limit]
        return [_item(r, scores.get(r.id) if op.query else None) for r in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c for c in op.match_conditions or () if c.match_type == "prefix"]
        users = {c.path[0] for c in prefixes if c.path and c.path[0] != "*"}
        if len(users) != 1:
            raise InvalidInput("list namespaces under one user: a prefix condition (user, …)")
        (user,) = users
        found = {(user, *_path_of(r.scope)) for r in self._scope(user).memories.list()}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        chosen = sorted(ns for ns in found if all(_namespace_matches(ns, c)
                                                  for c in op.match_conditions or ()))  # fmt: skip
        return chosen[op.offset : op.offset + op.limit]

    # --- namespaces -----------------------------------------------------------------------------

    def _scope(self, user: str) -> Scope:
        return self.memory.scope(self.tenant, user, actor="langgraph")

    def _where(self, namespace: tuple[str, ...]) -> tuple[Scope, str]:
        """The principal and the convmem scope name of a namespace ``(user, *path)``."""
        if not namespace:
            raise InvalidInput("a namespace starts with the user: (user, …)")
        user, *path = namespace
        if any(not part or _SEPARATOR in part for part in path):
            raise InvalidInput(
                f"namespace parts below the user are non-empty, without {_SEPARATOR!r}"
            )
        name = "user" if not path else _PROJECT + _SEPARATOR.join(path)
        return self._scope(user), name


def _path_of(scope_name: str) -> tuple[str, ...]:
    if scope_name.startswith(_PROJECT):
        return tuple(scope_name[len(_PROJECT) :].split(_SEPARATOR))
    return ()


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = condition.path
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


def _current(scope: Scope, name: str, key: str) -> MemoryRecord | None:
    """The newest current (confirmed or proposed) memory under ``key`` in scope ``name``."""
    subject = key.strip().lower()
    found = [r for r in scope.memories.list(scope=name) if r.subject_key == subject]
    return max(found, key=lambda r: r.updated_at, default=None)


def _text_of(value: Mapping[str, Any]) -> tuple[str, str | None]:
    """What a value is stored as: its text, or its JSON; and the category it names."""
    if set(value) <= {"text", "category"} and isinstance(value.get("text"), str):
        category = value.get("category")
        return value["text"], category if isinstance(category, str) else None
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False), None
    except (TypeError, ValueError) as exc:
        raise InvalidInput("a store value must be a JSON object") from exc


def _value_of(record: MemoryRecord) -> dict[str, Any]:
    if record.text.startswith("{"):
        try:
            value = json.loads(record.text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"text": record.text, "category": record.category}


def _item(record: MemoryRecord, score: float | None = None) -> SearchItem:
    return SearchItem(
        namespace=(record.user_id, *_path_of(record.scope)),
        key=record.subject_key,
        value=_value_of(record),
        created_at=record.created_at,
        updated_at=record.updated_at,
        score=score,
    )


def _matches(value: dict[str, Any], conditions: dict[str, Any]) -> bool:
    for field, wanted in conditions.items():
        actual = value.get(field)
        tests = wanted.items() if isinstance(wanted, dict) else [("$eq", wanted)]
        for name, operand in tests:
            if name not in _COMPARE:
                raise InvalidInput(f"unknown filter operator {name!r}")
            try:
                if not _COMPARE[name](actual, operand):
                    return False
            except TypeError:  # comparing across types: no match
                return False
    return True
