"""Would Citus route this statement to one shard? A checker over PostgreSQL's own grammar.

With the per-tenant tables distributed by ``tenant_id`` (README, "Scaling out"), a statement
goes to one shard when every distributed table it reads or writes is pinned to one tenant: its
``tenant_id`` is equal to a parameter or constant, directly or through equalities with another
pinned table's ``tenant_id`` (a co-located join), in the conjunctive conditions of the query
level that names it (or an enclosing one), or in the row an INSERT writes. All the pins of a
statement must hold one value: two tenants in one statement is a join across tenants.

Reference tables and the coordinator's own tables need no pin; the maintenance scans that
rebuild or backfill the index across tenants (``FAN_OUT``) are multi-shard by design.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tests.extras import module_of_extra

module_of_extra("psycopg", "postgres")  # before the imports that need it

import psycopg  # noqa: E402
from pglast import ast, parse_sql  # noqa: E402
from pglast.enums import BoolExprType  # noqa: E402

DISTRIBUTED = frozenset(
    {
        "conversations", "messages", "pinned_instructions", "memories", "memory_vectors",
        "audit_events", "user_settings", "summaries", "message_index", "search_generations",
        "conversation_terms", "term_vectors", "last_assemblies", "tools", "tool_vectors",
        "message_blobs", "entities", "entity_names", "entity_facts", "memory_evidence",
        "entity_name_sources", "embedder_switches",
        "staged_message_vectors", "staged_memory_vectors",
    }
)  # fmt: skip
REFERENCE = frozenset({"api_keys", "tenant_policies"})
COORDINATOR = frozenset({"jobs", "_migrations"})
# Store methods that scan every tenant on purpose (the worker's rebuild and backfill, a
# migration's backfill, never a request): Citus runs them on every shard.
FAN_OUT = frozenset(
    {
        "unindexed_messages", "missing_message_vectors", "embedded_message_vectors",
        "missing_term_vectors",
        "missing_memory_vectors", "recent_writers", "switches_to", "conversations_to_index",
        # the planner's statistics after a bulk import (ANALYZE of whole tables, all shards)
        "refresh_statistics",
        # a migration's backfill of every tenant's rows, once, while migrating
        "m019_entity_name_sources", "message_forms_after", "memory_forms_after",
        "tool_documents_to_form", "m021_entity_fact_consent", "m030_long_conversations_only",
    }
)  # fmt: skip

_PLACEHOLDER = re.compile(r"%s|%%")
_STORE_CODE = re.compile(r"store/(postgres|sql)/")


class RoutingConnection(psycopg.Connection[Any]):
    """A connection that checks every statement it sends (``checked`` counts them) and keeps
    those Citus could not route to one shard in ``unroutable``."""

    checked = 0
    unroutable: ClassVar[list[str]] = []

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        text = str(query)
        if not in_fan_out():
            RoutingConnection.checked += 1
            for reason in violations(text, params):
                RoutingConnection.unroutable.append(f"{reason}: {' '.join(text.split())}")
        return super().execute(query, params, **kwargs)


def numbered(sql: str) -> str:
    """psycopg's ``%s`` placeholders as PostgreSQL's ``$n``."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() == "%%":
            return "%"
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(replace, sql)


def in_fan_out() -> bool:
    """True when a FAN_OUT method of the PostgreSQL store (its own or the SQL core's, which it
    runs) is on the call stack."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in FAN_OUT and _STORE_CODE.search(code.co_filename):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


@dataclass
class _Statement:
    params: Sequence[Any]
    parent: dict[object, object] = field(default_factory=dict)
    tables: list[tuple[object, str]] = field(default_factory=list)

    # --- union-find over pinned things: table references and parameter values ------------------

    def find(self, key: object) -> object:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            key = self.parent[key]
        return key

    def union(self, a: object, b: object) -> None:
        self.parent[self.find(a)] = self.find(b)

    def value_key(self, node: Any) -> object | None:
        while isinstance(node, ast.TypeCast):
            node = node.arg
        if isinstance(node, ast.ParamRef):
            return ("value", repr(self.params[(node.number or 0) - 1]))
        if isinstance(node, ast.A_Const):
            return ("value", repr(node.val))
        return None


def violations(sql: str, params: Sequence[Any] | None) -> list[str]:
    """Why Citus could not route ``sql`` to one shard (empty: it can)."""
    statement = _Statement(list(params or ()))
    for raw in parse_sql(numbered(sql)):
        _walk_statement(statement, raw.stmt, [])
    found: list[str] = []
    values: set[object] = set()
    for key, table in statement.tables:
        root = statement.find(key)
        pins = {
            k[1]
            for k in statement.parent
            if isinstance(k, tuple) and k[0] == "value" and statement.find(k) == root
        }
        if not pins:
            found.append(f"{table} is not filtered on one tenant_id")
        values |= pins
    if len(values) > 1:
        found.append(f"one statement spans tenants {sorted(map(str, values))}")
    return found


Scope = dict[str, tuple[object, str]]  # alias → (table reference key, table)


def _walk_statement(st: _Statement, node: Any, scopes: list[Scope]) -> None:
    if isinstance(node, ast.SelectStmt):
        _walk_select(st, node, scopes)
    elif isinstance(node, ast.InsertStmt):
        _walk_insert(st, node, scopes)
    elif isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
        scope: Scope = {}
        _with(st, node.withClause, scopes)
        _add_relation(st, node.relation, scope)
        extra = node.fromClause if isinstance(node, ast.UpdateStmt) else node.usingClause
        inner = [*scopes, scope]
        for item in extra or ():
            _from_item(st, item, scope, inner)
        _conditions(st, node.whereClause, inner)
        if isinstance(node, ast.UpdateStmt):
            for target in node.targetList or ():
                _expression(st, target.val, inner)
        returning = node.returningClause
        for target in (returning.exprs if returning else None) or ():
            _expression(st, target.val, inner)


def _with(st: _Statement, clause: Any, scopes: list[Scope]) -> None:
    for cte in (clause.ctes if clause else None) or ():
        _walk_statement(st, cte.ctequery, scopes)


def _walk_select(st: _Statement, node: Any, scopes: list[Scope]) -> None:
    _with(st, node.withClause, scopes)
    if node.larg is not None or node.rarg is not None:
        _walk_select(st, node.larg, scopes)
        _walk_select(st, node.rarg, scopes)
        return
    scope: Scope = {}
    inner = [*scopes, scope]
    for item in node.fromClause or ():
        _from_item(st, item, scope, inner)
    _conditions(st, node.whereClause, inner)
    _conditions(st, node.havingClause, inner)
    for target in node.targetList or ():
        _expression(st, target.val, inner)
    for row in node.valuesLists or ():
        for value in row:
            _expression(st, value, inner)


def _walk_insert(st: _Statement, node: Any, scopes: list[Scope]) -> None:
    _with(st, node.withClause, scopes)
    scope: Scope = {}
    key = _add_relation(st, node.relation, scope)
    columns = [c.name for c in node.cols or ()]
    select = node.selectStmt
    if key is not None and "tenant_id" in columns and isinstance(select, ast.SelectStmt):
        at = columns.index("tenant_id")
        for row in select.valuesLists or ():
            pinned = st.value_key(row[at])
            if pinned is not None:
                st.union(key, pinned)
        if select.targetList:
            inner_scope: Scope = {}
            inner = [*scopes, inner_scope]
            for item in select.fromClause or ():
                _from_item(st, item, inner_scope, inner)
            source = select.targetList[at].val
            pinned = st.value_key(source) or _tenant_column(source, inner)
            if pinned is not None:
                st.union(key, pinned)
    if isinstance(select, ast.SelectStmt):
        _walk_select(st, select, scopes)
    if node.onConflictClause is not None:
        for target in node.onConflictClause.targetList or ():
            _expression(st, target.val, [*scopes, scope])


def _add_relation(st: _Statement, relation: Any, scope: Scope) -> object | None:
    table = relation.relname
    alias = relation.alias.aliasname if relation.alias else table
    if table not in DISTRIBUTED:
        scope[alias] = (None, table)
        return None
    key = ("table", id(relation))
    st.tables.append((key, table))
    scope[alias] = (key, table)
    return key


def _from_item(st: _Statement, item: Any, scope: Scope, scopes: list[Scope]) -> None:
    if isinstance(item, ast.RangeVar):
        _add_relation(st, item, scope)
    elif isinstance(item, ast.JoinExpr):
        _from_item(st, item.larg, scope, scopes)
        _from_item(st, item.rarg, scope, scopes)
        _conditions(st, item.quals, scopes)
    elif isinstance(item, ast.RangeSubselect | ast.RangeFunction):
        if isinstance(item, ast.RangeSubselect):
            _walk_statement(st, item.subquery, scopes[:-1])
        alias: Any = item.alias
        if alias is not None:
            scope[str(alias.aliasname)] = (None, "(derived)")


def _conditions(st: _Statement, node: Any, scopes: list[Scope]) -> None:
    """Equalities of the top-level AND chain pin; anything under OR or NOT does not."""
    if node is None:
        return
    if isinstance(node, ast.BoolExpr) and node.boolop == BoolExprType.AND_EXPR:
        for arg in node.args or ():
            _conditions(st, arg, scopes)
        return
    if isinstance(node, ast.A_Expr) and [n.sval for n in node.name or ()] == ["="]:
        left = st.value_key(node.lexpr) or _tenant_column(node.lexpr, scopes)
        right = st.value_key(node.rexpr) or _tenant_column(node.rexpr, scopes)
        if left is not None and right is not None:
            st.union(left, right)
    _expression(st, node, scopes)


def _expression(st: _Statement, node: Any, scopes: list[Scope]) -> None:
    """Find subqueries anywhere in an expression and walk them (with the scopes around)."""
    if isinstance(node, ast.SubLink):
        _walk_statement(st, node.subselect, scopes)
        return
    if isinstance(node, ast.Node):
        for name in getattr(type(node), "__slots__", ()):
            _expression(st, getattr(node, name), scopes)
    elif isinstance(node, list | tuple):
        for item in node:
            _expression(st, item, scopes)


def _tenant_column(node: Any, scopes: list[Scope]) -> object | None:
    """The table reference a ``tenant_id`` column names (qualified, or the one distributed table
    of the innermost level that has one)."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if not isinstance(node, ast.ColumnRef):
        return None
    names = [getattr(f, "sval", None) for f in node.fields or ()]
    if names[-1] != "tenant_id":
        return None
    if len(names) == 2:
        for scope in reversed(scopes):
            if names[0] in scope:
                return scope[names[0]][0]
        return None
    for scope in reversed(scopes):
        keys = [key for key, _ in scope.values() if key is not None]
        if keys:
            return keys[0] if len(keys) == 1 else None
        if scope:
            return None
    return None
