"""Each tenant's tool registry: the definitions an application registers once, from which every
request of the tenant is offered only what its task needs (``convmem.tools.select``).

A tool is registered in any provider's shape (``convmem.tools.schema``) with optional "use when"
hints — short phrases of the requests it serves, used for ranking and never sent to the model —
and a risk level: ``low`` and ``medium`` are offered on relevance, ``high`` only when the caller
allows it for the request. Registering a name again replaces the definition.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from convmem.errors import InvalidInput, NeverStoreViolation
from convmem.memory.gate import admit
from convmem.model.admitted import Admitted
from convmem.model.tools import RISKS, RegisteredTool, Risk, ToolSpec
from convmem.model.tree import check_identifier
from convmem.retrieval.vector import Embedder, normalise
from convmem.store.base import Store, WriteTxn
from convmem.store.retry import write_retried
from convmem.tools.schema import check_tool_name, parse_tool

MAX_HINTS = 20
MAX_HINT_CHARS = 300
MAX_REGISTRY = 500


class _HasStore(Protocol):
    @property
    def store(self) -> Store: ...

    @property
    def embedder(self) -> Embedder | None: ...


def check_hints(use_when: object) -> tuple[str, ...]:
    if isinstance(use_when, str) or not isinstance(use_when, Sequence):
        raise InvalidInput("use_when must be a list of short phrases")
    if len(use_when) > MAX_HINTS:
        raise InvalidInput(f"at most {MAX_HINTS} use_when hints per tool")
    for hint in use_when:
        if not isinstance(hint, str) or not hint.strip() or len(hint) > MAX_HINT_CHARS:
            raise InvalidInput(f"each use_when hint must be 1 to {MAX_HINT_CHARS} characters")
        if "\x00" in hint:
            raise InvalidInput("use_when hints must not contain NUL characters")
    return tuple(use_when)


def check_risk(risk: object) -> Risk:
    if risk not in RISKS:
        raise InvalidInput(f"risk must be one of {', '.join(RISKS)}")
    return risk  # type: ignore[return-value]


@dataclass(frozen=True)
class ToolEntry:
    """One tool to register: its definition in any provider's shape, hints and risk level."""

    definition: Mapping[str, Any] | ToolSpec
    use_when: Sequence[str] = ()
    risk: str = "low"


def admitted_tool(tool: RegisteredTool) -> Admitted[RegisteredTool]:
    """The tool through the never-store gate: its description, hints and schema strings are
    stored and indexed; one holding a secret is refused (``NeverStoreViolation``)."""
    admitted = admit(tool)
    if not isinstance(admitted, Admitted):
        raise NeverStoreViolation(str(admitted.reason), admitted.detail)
    return admitted


class ToolRegistry:
    """``Memory.tools``: register, list and delete a tenant's tools."""

    def __init__(self, owner: _HasStore) -> None:
        self._store = owner.store
        self._embedder = owner.embedder

    def register(
        self,
        tenant: str,
        definition: Mapping[str, Any] | ToolSpec,
        *,
        use_when: Sequence[str] = (),
        risk: str = "low",
    ) -> RegisteredTool:
        """Register (or replace) a tool for ``tenant``; ``definition`` in any provider's shape."""
        return self.register_many(tenant, [ToolEntry(definition, use_when, risk)])[0]

    def register_many(
        self, tenant: str, entries: Sequence[ToolEntry]
    ) -> builtins.list[RegisteredTool]:
        """Register (or replace) several tools at once: all of them or, when one is refused,
        none."""
        check_identifier(tenant, "tenant")
        if isinstance(entries, str | bytes) or not isinstance(entries, Sequence):
            raise InvalidInput("entries must be a list of tools")
        checked: builtins.list[RegisteredTool] = []
        for entry in entries:
            if not isinstance(entry, ToolEntry):
                raise InvalidInput("each entry must be a ToolEntry")
            spec = parse_tool(entry.definition)
            checked.append(
                RegisteredTool(spec, check_hints(entry.use_when), check_risk(entry.risk))
            )
        for tool in checked:  # every definition is judged before anything is written
            admitted_tool(tool)
        names = [tool.name for tool in checked]
        if len(set(names)) != len(names):
            raise InvalidInput("a tool name appears twice")
        # embedded before the write transaction: a model call must not hold the writer's lock
        embedder = self._embedder
        vectors = normalise(embedder.embed([t.document for t in checked])) if embedder else None
        now = datetime.now(UTC)

        def unit(tx: WriteTxn) -> builtins.list[RegisteredTool]:
            existing = {t.name: t for t in tx.list_tools(tenant)}
            if len(existing.keys() | set(names)) > MAX_REGISTRY:
                raise InvalidInput(f"a tenant registers at most {MAX_REGISTRY} tools")
            stored = []
            for i, tool in enumerate(checked):
                before = existing.get(tool.name)
                created = before.created_at if before else now
                tool = replace(tool, created_at=created, updated_at=now)
                tx.put_tool(tenant, admitted_tool(tool))
                if vectors is not None and embedder is not None:
                    tx.set_tool_vector(tenant, tool.name, embedder.name, vectors[i])
                stored.append(tool)
            return stored

        # a conflict with a concurrent registration (PostgreSQL) runs the unit again
        return write_retried(self._store, unit)

    def list(self, tenant: str) -> builtins.list[RegisteredTool]:
        """The tenant's tools, by name."""
        check_identifier(tenant, "tenant")
        with self._store.read() as tx:
            return tx.list_tools(tenant)

    def delete(self, tenant: str, name: str) -> None:
        """Remove a tool; ``NotFound`` when the tenant has none of that name."""
        check_identifier(tenant, "tenant")
        check_tool_name(name)
        write_retried(self._store, lambda tx: tx.delete_tool(tenant, name))
