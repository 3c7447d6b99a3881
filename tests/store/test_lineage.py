"""Lineage (issue 30, DESIGN principles 12-13): every derived row knows its sources, and deleting
a source deletes what was derived from it and not confirmed by the user, on every backend,
through the one graph of ``convmem.store.lineage``.

The first tests hold the graph to the schema, so a table or a column naming a source that is
added later fails here until the graph places it. The others are the reproductions of issue 30:
proposals outlived the message or conversation they were drawn from (text in ``memories`` and
its full-text index, a link to a message that no longer existed); a declined or deleted memory's
vector; a deleted tool's description.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest

import convmem
from convmem.store.lineage import (
    FOLLOW_THEIR_ROW,
    LINEAGE,
    NOT_DERIVED,
    SOURCES,
    derived_tables,
    source_tables,
)
from convmem.store.postgres.rows import POSTGRES
from convmem.store.sqlite.sql import SQLITE
from tests.store.backends import Backend

ABSENT = {"sqlite": SQLITE.absent, "postgresql": POSTGRES.absent}
# columns that name a source's id, wherever they appear
NAMES_A_SOURCE = {
    "conversation_id": "conversation",
    "message_id": "message",
    "through_message_id": "message",
    "source_message_id": "message",
    "memory_id": "memory",
    "conflicts_with_id": "memory",
    "supersedes_id": "memory",
    "entity_id": "entity",
}


def _marker() -> str:
    # letters then digits: no stemmer changes it, every tokenizer keeps it whole
    return "zyxqv" + "".join(secrets.choice("0123456789") for _ in range(8))


# --- the graph against the schema ------------------------------------------------------------


def test_every_table_is_placed_in_the_lineage_graph(backend: Backend) -> None:
    with backend.open():
        pass  # migrated
    tables = set(backend.schema())
    placed = source_tables() | derived_tables() | FOLLOW_THEIR_ROW[backend.name] | NOT_DERIVED
    assert sorted(tables - placed) == [], "tables the lineage graph does not place"
    missing = derived_tables() - ABSENT[backend.name] - tables
    assert sorted(missing) == [], "the graph names tables this backend does not have"
    assert ABSENT[backend.name] & tables == set()


def test_every_column_naming_a_source_has_an_edge(backend: Backend) -> None:
    with backend.open():
        pass
    edges = {(e.source, e.table, e.column) for e in LINEAGE}
    edges |= {(e.source, e.through[0], e.through[2]) for e in LINEAGE if e.through}
    unplaced = [
        f"{table}.{column}"
        for table, columns in sorted(backend.schema().items())
        for column in sorted(columns & set(NAMES_A_SOURCE))
        if table not in NOT_DERIVED
        and table != SOURCES[NAMES_A_SOURCE[column]].table  # type: ignore[index]
        and (NAMES_A_SOURCE[column], table, column) not in edges
    ]
    # a memory's links to other memories are columns of its own table
    unplaced = [name for name in unplaced if not name.startswith("memories.")]
    assert unplaced == []
    memory_links = {(e.table, e.column) for e in LINEAGE if e.source == "memory"}
    assert {("memories", "conflicts_with_id"), ("memories", "supersedes_id")} <= memory_links


def test_every_edge_of_the_graph_is_indexed(backend: Backend) -> None:
    # the cascade finds a source's derived rows by (tenant, column): without an index that leads
    # with them, deleting one message reads every row of its tenant's table
    with backend.open():
        pass
    indexes = backend.indexes()
    edges = {(e.table, e.column) for e in LINEAGE if e.json_key is None}
    edges |= {(e.through[0], e.through[2]) for e in LINEAGE if e.through}

    def indexed(table: str, column: str) -> bool:
        keys = indexes.get(table, [])
        return any(key[:2] == ("tenant_id", column) or key[:1] == (column,) for key in keys)

    unindexed = [
        f"{table}.{column}"
        for table, column in sorted(edges)
        if table not in ABSENT[backend.name] and not indexed(table, column)
    ]
    assert unindexed == []


# A source row deleted anywhere but the cascade would leave what was derived from it. The
# exceptions: the entity upkeep (an entity whose last fact or name went, through the cascade or
# retention, goes with its names, by definition with nothing else derived from it), and the
# migrations (every migrations*.py module), which transform stored data once and are no delete
# path.
_SOURCE_DELETE = re.compile(
    r"DELETE FROM (?:" + "|".join(sorted(source_tables())) + r")\b|DELETE FROM \{"
)
_ENTITY_UPKEEP = {"entities.py", "entity_sources.py"}
_UPKEEP_DELETES = {"DELETE FROM entities", "DELETE FROM {"}


def test_sources_are_deleted_only_through_the_cascade() -> None:
    store = Path(convmem.__file__).parent / "store"
    found = [
        f"{path.relative_to(store)}: {hit.group(0)}"
        for path in sorted(store.rglob("*.py"))
        if path.name != "lineage.py" and not path.name.startswith("migrations")
        for hit in _SOURCE_DELETE.finditer(path.read_text(encoding="utf-8"))
        if not (path.name in _ENTITY_UPKEEP and hit.group(0) in _UPKEEP_DELETES)
    ]
    assert found == []
    # the check sees a source's delete where one is written
    assert _SOURCE_DELETE.search('"DELETE FROM memories WHERE tenant_id = ?"')


# --- the reproductions -------------------------------------------------------------------------


def _memory(backend: Backend) -> convmem.Memory:
    return backend.open(embedder=convmem.HashingEmbedder())


def _proposed_from_a_turn(scope: convmem.Scope, marker: str) -> tuple[convmem.Conversation, str]:
    conv = scope.create_conversation()
    conv.append("user", "An unrelated first turn about gardening.")
    said = conv.append("user", f"I prefer window seats near {marker} on long flights.")
    (notice,) = said.notices
    assert notice.status == "proposed" and notice.memory is not None
    assert notice.memory.source_message_id == said.id
    return conv, said.id


@pytest.mark.parametrize("whole", [False, True], ids=["message delete", "conversation delete"])
def test_a_proposal_goes_with_the_turn_it_was_drawn_from(backend: Backend, whole: bool) -> None:
    marker = _marker()
    with _memory(backend) as memory:
        alice = memory.scope("t-lineage", "alice")
        conv, said = _proposed_from_a_turn(alice, marker)
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 1
        if whole:
            conv.delete()
        else:
            conv.delete_message(said)
        assert alice.memories.list(status=None) == []
        assert alice.search_memories(marker) == []
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 0
    assert marker not in backend.dump()


def test_a_confirmed_memory_outlives_its_turn_unlinked(backend: Backend) -> None:
    """The user's own act stays: "remember …" (or a confirmed proposal) is kept apart from the
    chat it was said in, as deleting a chat does not unsave what one asked to be remembered; it
    no longer points at the deleted message."""
    with _memory(backend) as memory:
        alice = memory.scope("t-lineage", "alice")
        conv, _ = _proposed_from_a_turn(alice, _marker())
        (proposal,) = alice.memories.list(status="proposed")
        confirmed = alice.memories.confirm(proposal.id)
        told = conv.append("user", "Remember that I drink green tea every morning.")
        (notice,) = told.notices
        assert notice.status == "saved" and notice.memory is not None
        conv.delete()
        kept = {m.id: m for m in alice.memories.list(status=None)}
        assert set(kept) == {confirmed.id, notice.memory.id}
        assert [m.source_message_id for m in kept.values()] == [None, None]
        assert kept[confirmed.id].text == confirmed.text
        assert alice.memories.evidence(notice.memory.id) == []
        assert [h.memory.id for h in alice.search_memories("green tea")] == [notice.memory.id]


def test_a_consolidated_proposal_goes_with_any_turn_it_cites(backend: Backend) -> None:
    from convmem.testing.contract.test_consolidation import _consolidate, _say

    marker = _marker()
    with _memory(backend) as memory:
        alice = memory.scope("t-lineage", "alice")
        ids = _say(alice, f"I love hiking {marker} in the mountains.",
                   f"I love hiking {marker} in mountains on weekends.")  # fmt: skip
        _consolidate(memory, alice)
        (proposal,) = alice.memories.list(status="proposed")
        assert set(alice.memories.evidence(proposal.id)) == set(ids)
        # the one its source does not name: found through the evidence
        other = next(i for i in ids if i != proposal.source_message_id)
        alice.conversation(alice.message(other).conversation_id).delete_message(other)
        assert alice.memories.list(status=None) == []
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 0


def test_a_declined_or_deleted_memory_leaves_no_vector(backend: Backend) -> None:
    with _memory(backend) as memory:
        alice = memory.scope("t-lineage", "alice")
        proposal = alice.propose(f"I enjoy the {_marker()} opera.").memory
        kept = alice.remember(f"My locker word is {_marker()}.").memory
        assert proposal is not None and kept is not None
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 2
        alice.memories.reject(proposal.id)
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 1
        alice.memories.delete(kept.id)
        assert backend.derived_counts("t-lineage")["memory_vectors"] == 0


def test_a_deleted_tool_leaves_no_description(backend: Backend) -> None:
    marker = _marker()
    spec = {"name": "lookup", "description": f"Look up a {marker} in the catalogue."}
    with _memory(backend) as memory:
        memory.tools.register("t-lineage", spec, use_when=[f"asks about {marker}"])
        memory.tools.register("t-other", {"name": "lookup", "description": "Look things up."})
        assert [t.spec.name for t in memory.tools.list("t-lineage")] == ["lookup"]
        memory.tools.delete("t-lineage", "lookup")
        assert memory.tools.list("t-lineage") == []
        with pytest.raises(convmem.NotFound):
            memory.tools.delete("t-lineage", "lookup")
    assert marker not in backend.dump()


def test_a_deleted_entity_takes_its_facts_and_names(backend: Backend) -> None:
    surname = "Zorv" + "".join(secrets.choice("bcdfghjklmnpqrstvwxz") for _ in range(6))
    with _memory(backend) as memory:
        alice = memory.scope("t-lineage", "alice")
        alice.create_conversation().append("user", f"My friend Quillon {surname} paints.")
        (entity,) = alice.entities.list()
        assert entity.name == f"Quillon {surname}"
        assert len(_rows_of(backend.dump(), ENTITY_TABLES)) >= 4
        with pytest.raises(convmem.NotFound):
            memory.scope("t-lineage", "bob").entities.delete(entity.id)
        alice.entities.delete(entity.id)
        assert alice.entities.list() == []
        with pytest.raises(convmem.NotFound):
            alice.entities.delete(entity.id)
    assert (
        _rows_of(backend.dump(), ENTITY_TABLES) == []
    )  # the message that said the name is the user's to delete


ENTITY_TABLES = ("entities", "entity_facts", "entity_names", "entity_name_sources")


def _rows_of(dump: str, tables: tuple[str, ...]) -> list[str]:
    """The rows a backend's dump lists under these tables ("name: count" heads each)."""
    rows: list[str] = []
    current = None
    for line in dump.splitlines():
        head, _, count = line.partition(": ")
        if count.isdigit() and not line.startswith(("(", "[")):
            current = head
        elif current in tables:
            rows.append(line)
    return rows


def test_a_tenant_erase_leaves_nothing_of_it_and_keeps_the_others(backend: Backend) -> None:
    marker = _marker()
    with _memory(backend) as memory:
        for tenant in ("t-gone", "t-kept"):
            scope = memory.scope(tenant, "alice")
            _proposed_from_a_turn(scope, marker)
            scope.remember(f"My locker word is {marker}.")
            memory.tools.register(tenant, {"name": "lookup", "description": f"Find {marker}."})
            memory.keys.create(tenant, "user", user="alice")
            memory.set_tenant_policy(tenant, retention={"transcripts": 30})
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        kept_before = backend.derived_counts("t-kept")
        counts = memory.erase_tenant("t-gone")
        assert counts["messages"] == 2 and counts["memories"] == 2 and counts["tools"] == 1
        assert backend.derived_counts("t-kept") == kept_before
        assert all(n == 0 for n in backend.derived_counts("t-gone").values())
        gone = memory.scope("t-gone", "alice")
        assert gone.conversations() == [] and gone.memories.list(status=None) == []
        assert memory.tools.list("t-gone") == [] and memory.keys.list("t-gone") == []
        assert [e.action for e in gone.audit()] == []  # the user's events went with the tenant
        assert memory.tenant_policy("t-gone").retention.set() == {}
        kept = memory.scope("t-kept", "alice")
        assert len(kept.memories.list(status=None)) == 2 and memory.tools.list("t-kept")
        with pytest.raises(convmem.InvalidInput):
            memory.erase_tenant("")
    assert _tenant_rows(backend, "t-gone") == ["audit_events"]


def _tenant_rows(backend: Backend, tenant: str) -> list[str]:
    """The tables holding rows of ``tenant`` (by its ``tenant_id`` column)."""
    found: list[str] = []
    for table, columns in sorted(backend.schema().items()):
        if "tenant_id" in columns and _count(backend, table, tenant):
            found.append(table)
    return found


def _count(backend: Backend, table: str, tenant: str) -> int:
    if backend.name == "sqlite":
        import sqlite3
        from contextlib import closing

        path = backend.url.removeprefix("sqlite:///")
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            sql = f'SELECT count(*) FROM "{table}" WHERE tenant_id = ?'
            return int(db.execute(sql, (tenant,)).fetchone()[0])
    import psycopg

    with psycopg.connect(backend.url, autocommit=True) as pg:
        sql = f'SELECT count(*) FROM "{table}" WHERE tenant_id = %s'
        row = pg.execute(sql, (tenant,)).fetchone()
        return int(row[0]) if row else 0
