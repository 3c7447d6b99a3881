"""Lineage: which stored rows are derived from which, and what deleting a source does to them.

This table is the one place that knows the graph (DESIGN principles 12 and 13). Every delete
path of both backends — a message and its subtree, a conversation, a memory, a registered tool,
an entity, a declined proposal's text, a user's delete-all, a tenant's erase, and through them
the retention sweeps — runs ``Cascade`` over it (``erase``, ``erase_text``, ``erase_owner``),
so a table added later is followed by adding one line here, never by finding every delete
path. ``tests/store/test_lineage.py`` fails while a table or a column naming a source in either
schema is not placed here, or a store module deletes a source row itself.

Entity facts go with their message whatever their status: a confirmed fact is the user's
consent to recall it elsewhere, not a statement of their own kept apart from the chat (keeping
one apart is what promoting it to a memory does).

What a source's deletion does to a derived row:

- **deleted**, dependants first (a derived row that is itself a source — a message of a
  conversation, a proposal of a message — has its own derived rows deleted before it);
- **kept, unlinked** where the row is the user's own act (``keep_when``): a memory the user
  confirmed (said "remember …", confirmed a proposal, corrected one, or declined one) survives
  the deletion of the message it came from, with its text, because the user chose to keep it
  apart from that chat (as deleting a chat does not unsave what one asked an assistant to
  remember); its link to the message is set to NULL so nothing points at a message that no
  longer exists. A *proposal* — the model's or the heuristics' guess, never confirmed — goes
  with any message it was drawn from (its ``source_message_id`` or any message its evidence
  cites): what the user deleted must not come back as a suggestion.

Summaries are invalidated by deletion: each is keyed by the message it runs through and covers
that message's ancestors, so deleting a message deletes its subtree and with it every summary
that covered any deleted message.

Rows a backend keeps in step inside its own tables (SQLite's FTS5 tables, filled and emptied by
triggers on the row they index; PostgreSQL's ``tsv`` columns) are listed per backend in
``FOLLOW_THEIR_ROW``; tables that are no user content or no derivation (the audit, keys,
settings, bookkeeping) in ``NOT_DERIVED``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from convmem.store.dialect import Dialect

SourceKind = Literal["conversation", "message", "memory", "tool", "entity"]

# rows matching this are kept (unlinked) whatever they are
ALWAYS: Final = "TRUE"
# a memory the user has acted on: confirmed, superseded by a newer statement, or declined
_USERS_OWN_ACT: Final = "status <> 'proposed'"


@dataclass(frozen=True)
class Source:
    """The table a kind of source lives in, and its id column (unique within a tenant)."""

    table: str
    key: str


SOURCES: Final[Mapping[SourceKind, Source]] = {
    "conversation": Source("conversations", "id"),
    "message": Source("messages", "id"),
    "memory": Source("memories", "id"),
    "tool": Source("tools", "name"),
    "entity": Source("entities", "id"),
}


@dataclass(frozen=True)
class Derived:
    """Rows of ``table`` derived from a ``source``: those whose ``column`` names its id.

    ``json_key``: the id is that key of the JSON document in ``column``. ``through``: the
    rows are found through a link table ``(table, its column naming the derived row's
    key, its column naming the source)``. ``kind``: the derived rows are themselves a source
    of that kind (their own derived rows go first). ``keep_when``: rows matching this SQL
    condition survive with ``column`` set to NULL. ``text``: derived from the source's text,
    so they also go when only that text is erased (a declined proposal keeps its row).
    ``upkeep``: the backend's upkeep after the table loses rows runs (not when the rows go
    with the very record that upkeep would repair)."""

    source: SourceKind
    table: str
    column: str
    json_key: str | None = None
    through: tuple[str, str, str] | None = None
    kind: SourceKind | None = None
    keep_when: str | None = None
    text: bool = False
    upkeep: bool = True


LINEAGE: Final[tuple[Derived, ...]] = (
    # a conversation: its messages (and all they carry), then what names the conversation
    Derived("conversation", "messages", "conversation_id", kind="message"),
    Derived("conversation", "entity_facts", "conversation_id"),
    Derived("conversation", "message_index", "conversation_id"),
    Derived("conversation", "summaries", "conversation_id"),
    Derived("conversation", "jobs", "conversation_id"),
    Derived("conversation", "pinned_instructions", "conversation_id"),
    Derived("conversation", "last_assemblies", "conversation_id"),
    Derived("conversation", "conversation_terms", "conversation_id"),
    Derived("conversation", "search_generations", "conversation_id"),
    # a message: proposals drawn from it (by their source, or by any evidence they cite) go;
    # memories the user acted on stay, unlinked
    Derived("message", "memories", "source_message_id", kind="memory", keep_when=_USERS_OWN_ACT),
    Derived(
        "message",
        "memories",
        "id",
        through=("memory_evidence", "memory_id", "message_id"),
        kind="memory",
        keep_when=_USERS_OWN_ACT,
    ),
    Derived("message", "memory_evidence", "message_id"),
    Derived("message", "entity_facts", "message_id"),
    Derived("message", "entity_name_sources", "message_id"),
    Derived("message", "summaries", "through_message_id"),
    Derived("message", "jobs", "payload", json_key="through_message_id"),
    Derived("message", "message_index", "message_id"),
    Derived("message", "message_tokens", "message_id"),
    Derived("message", "message_blobs", "message_id"),
    Derived("message", "idempotency_keys", "message_id"),
    Derived("message", "staged_message_vectors", "message_id", text=True),
    # a memory: its vector and index entry, the evidence it cites, the records pointing at it
    Derived("memory", "memory_vectors", "memory_id", text=True),
    Derived("memory", "staged_memory_vectors", "memory_id", text=True),
    Derived("memory", "memory_evidence", "memory_id"),
    Derived("memory", "idempotency_keys", "memory_id"),
    Derived("memory", "memories", "conflicts_with_id", keep_when=ALWAYS),
    Derived("memory", "memories", "supersedes_id", keep_when=ALWAYS),
    # a registered tool: its vectors (its full-text entry follows its row)
    Derived("tool", "tool_vectors", "name", text=True),
    # an entity: its facts and names, and the messages that said each name
    Derived("entity", "entity_facts", "entity_id", upkeep=False),
    Derived("entity", "entity_names", "entity_id"),
    Derived("entity", "entity_name_sources", "entity_id", upkeep=False),
)

# Kept in step with their row by the backend itself (triggers, generated columns).
FOLLOW_THEIR_ROW: Final[Mapping[str, frozenset[str]]] = {
    "sqlite": frozenset({"memories_fts", "message_fts", "tools_fts"}),
    "postgresql": frozenset(),  # tsv columns live in the row they index
}

# Tables that hold no text derived from a source above (or are the user's own settings, or
# bookkeeping): what a user's or a tenant's deletion removes, never a source's.
NOT_DERIVED: Final = frozenset(
    {
        "audit_events",  # ids, actions and reasons, never content: kept as the record of deletes
        "api_keys",
        "page_sessions",  # sign-in links and sessions: a token's hash and times, like keys
        "tenant_policies",
        "embedder_switches",  # which embedder serves a tenant and which is being built
        "user_settings",
        # a tenant's word vectors: leave with the last conversation using the word (a trigger on
        # SQLite, ``conversation_terms``' hook on PostgreSQL)
        "term_vectors",
        "_migrations",
        "fts_pending",  # SQLite: which FTS5 tables a write must purge (erase.py)
    }
)


def derived_tables() -> frozenset[str]:
    return frozenset(edge.table for edge in LINEAGE)


def source_tables() -> frozenset[str]:
    return frozenset(source.table for source in SOURCES.values())


# --- execution (both backends) --------------------------------------------------------------


class Cursor(Protocol):
    def fetchall(self) -> list[Any]: ...


class Executes(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


# After rows of a table were deleted: the backend's upkeep (names recomputed, caches moved),
# given the values of one column of the deleted rows.
Hook = tuple[str, Callable[[str, list[Any]], None]]


class Cascade:
    """Runs ``LINEAGE`` on one transaction of one backend."""

    def __init__(
        self, db: Executes, dialect: Dialect, hooks: Mapping[str, Hook] | None = None
    ) -> None:
        self._db = db
        self._d = dialect
        self._hooks = hooks or {}
        # rows deleted per table by this cascade (what ``delete_user`` reports)
        self.counts: dict[str, int] = {}

    def erase(self, tenant: str, kind: SourceKind, ids: Sequence[str]) -> int:
        """Delete these sources and everything derived from them (dependants first), keeping
        the rows the user acted on, unlinked. Returns how many sources were deleted."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        self._follow(tenant, kind, ids, text_only=False)
        source = SOURCES[kind]
        match = f"{source.key} {self._d.one_of}"
        return len(self._delete(tenant, source.table, match, (self._d.ids(ids),)))

    def erase_all(self, tenant: str, kind: SourceKind, user: str | None = None) -> int:
        """``erase`` every source of this kind the tenant (or one of its users) has."""
        source = SOURCES[kind]
        owner = f"tenant_id = {self._d.mark}" + (
            "" if user is None else f" AND user_id = {self._d.mark}"
        )
        params = (tenant,) if user is None else (tenant, user)
        rows = self._db.execute(
            f"SELECT {source.key} FROM {source.table} WHERE {owner}", params
        ).fetchall()
        return self.erase(tenant, kind, [row[0] for row in rows])

    def erase_owner(
        self, tenant: str, user: str | None, schema: Mapping[str, frozenset[str]]
    ) -> dict[str, int]:
        """Everything of one user (``user``) or of a whole tenant (``None``): first each source
        they own with what was derived from it, through the graph; then every other row of the
        tenant (or the user) in any table of ``schema`` (table → columns, read from the
        database, so a table added later is included). A user's audit events stay (they hold
        no content and record the delete); a tenant's go with it. Rows deleted per table."""
        owner = f"tenant_id = {self._d.mark}" + (
            "" if user is None else f" AND user_id = {self._d.mark}"
        )
        params = (tenant,) if user is None else (tenant, user)
        for kind, source in SOURCES.items():
            if user is None or "user_id" in schema.get(source.table, frozenset()):
                self.erase_all(tenant, kind, user)  # (the tool registry is the tenant's)
        column = "tenant_id" if user is None else "user_id"
        for table, columns in sorted(schema.items()):
            if "tenant_id" not in columns or column not in columns:
                continue
            if user is not None and table == "audit_events":
                continue
            deleted = self._db.execute(f"DELETE FROM {table} WHERE {owner}", params).rowcount
            self.counts[table] = self.counts.get(table, 0) + max(deleted, 0)
        return dict(self.counts)

    def erase_text(self, tenant: str, kind: SourceKind, ids: Sequence[str]) -> None:
        """The source rows stay but their text is erased: what was derived from the text goes
        (a declined proposal's vector)."""
        if ids:
            self._follow(tenant, kind, list(dict.fromkeys(ids)), text_only=True)

    def _follow(self, tenant: str, kind: SourceKind, ids: list[str], *, text_only: bool) -> None:
        for edge in LINEAGE:
            if edge.source != kind or (text_only and not edge.text) or edge.table in self._d.absent:
                continue
            match = self._match(edge)
            if edge.keep_when is not None and edge.through is None and edge.json_key is None:
                self._db.execute(
                    f"UPDATE {edge.table} SET {edge.column} = NULL "
                    f"WHERE tenant_id = {self._d.mark} AND {match} AND ({edge.keep_when})",
                    self._params(tenant, edge, ids),
                )
            if edge.keep_when is not None:
                if edge.keep_when == ALWAYS:
                    continue
                match += f" AND NOT ({edge.keep_when})"
            if edge.kind is not None:
                key = SOURCES[edge.kind].key
                rows = self._db.execute(
                    f"SELECT {key} FROM {edge.table} WHERE tenant_id = {self._d.mark} AND {match}",
                    self._params(tenant, edge, ids),
                ).fetchall()
                self.erase(tenant, edge.kind, [row[0] for row in rows])
            else:
                params = self._params(tenant, edge, ids)[1:]
                self._delete(tenant, edge.table, match, params, upkeep=edge.upkeep)

    def _match(self, edge: Derived) -> str:
        if edge.through is not None:
            link, derived_key, source_key = edge.through
            return (
                f"{edge.column} IN (SELECT {derived_key} FROM {link} WHERE tenant_id = "
                f"{self._d.mark} AND {source_key} {self._d.one_of})"
            )
        if edge.json_key is not None:
            column = self._d.json_text.format(column=edge.column, key=edge.json_key)
            return f"{column} {self._d.one_of}"
        return f"{edge.column} {self._d.one_of}"

    def _params(self, tenant: str, edge: Derived, ids: list[str]) -> tuple[Any, ...]:
        if edge.through is not None:
            return (tenant, tenant, self._d.ids(ids))
        return (tenant, self._d.ids(ids))

    def _delete(
        self, tenant: str, table: str, match: str, params: Sequence[Any], *, upkeep: bool = True
    ) -> list[Any]:
        """Delete the tenant's rows of ``table`` matching ``match`` (whose parameters are
        ``params``); the table's hook, if any, is told the deleted rows' values."""
        hook = self._hooks.get(table) if upkeep else None
        returning = hook[0] if hook else "1"
        rows: list[Any] = self._db.execute(
            f"DELETE FROM {table} WHERE tenant_id = {self._d.mark} AND {match} "
            f"RETURNING {returning}",
            (tenant, *params),
        ).fetchall()
        if hook and rows:
            hook[1](tenant, [row[0] for row in rows])
        self.counts[table] = self.counts.get(table, 0) + len(rows)
        return rows
