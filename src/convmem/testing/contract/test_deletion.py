"""Deletion propagates (DESIGN principle 12), counted per derived table of the backend.

Each test writes the record to delete into a tenant of its own, beside a control tenant written
the same way: every derived table of the record's kind must hold rows before the delete (the
probe sees them, the scenario makes them) and none of the tenant's after, while the control
tenant's counts do not move. The public API must agree: the record is gone from lookup, search,
export and assembled requests.
"""

from __future__ import annotations

import json

import pytest

import convmem
from convmem.testing.clock import written_days_ago
from convmem.testing.harness import Backend, RecordKind
from convmem.testing.scenarios import SMALL, chat, open_full, populate


def assert_populated(backend: Backend, tenant: str, kind: RecordKind) -> dict[str, int]:
    counts = backend.derived_counts(tenant)
    empty = sorted(t for t in backend.derived_tables(kind) if counts[t] == 0)
    assert empty == [], f"the scenario left these {kind} tables empty: {empty}"
    return counts


def assert_emptied(backend: Backend, tenant: str, kind: RecordKind) -> None:
    counts = backend.derived_counts(tenant)
    left = {t: counts[t] for t in sorted(backend.derived_tables(kind)) if counts[t]}
    assert left == {}, f"rows derived from the deleted {kind} are left: {left}"


def exported_text(scope: convmem.Scope) -> str:
    return json.dumps(scope.export()["data"], ensure_ascii=False, default=str)


def test_deleting_a_root_message_empties_every_table_derived_from_its_subtree(
    backend: Backend,
) -> None:
    with open_full(backend) as memory:
        doomed = memory.scope("t-doomed", "alice")
        control = memory.scope("t-control", "alice")
        conv, _ = populate(memory, doomed, control)
        assert_populated(backend, doomed.tenant, "message")
        kept = backend.derived_counts(control.tenant)

        root = conv.branch()[0]
        assert len(conv.delete_message(root.id)) == 80
        assert_emptied(backend, doomed.tenant, "message")
        assert backend.derived_counts(control.tenant) == kept
        assert conv.messages() == [] and conv.summaries() == []
        with pytest.raises(convmem.NotFound):
            doomed.message(root.id)
        assert conv.search("walrus kelp lighthouse") == []
        assert "walrus" not in exported_text(doomed)
        assert [j for j in memory.jobs() if j.tenant_id == doomed.tenant] == []


def test_deleting_a_branch_leaves_what_its_remaining_turns_alone_would_have(
    backend: Backend,
) -> None:
    """Derived rows after cutting turns 40-79 equal those of the same 40 turns written alone:
    nothing of the cut turns is left (vocabulary, word vectors, full text included), nothing of
    the kept ones is lost."""
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        cut = memory.scope("t-cut", "alice").create_conversation()
        written = chat(cut, 0, 80)
        alone = memory.scope("t-alone", "alice").create_conversation()
        chat(alone, 0, 40)
        assert backend.derived_counts("t-cut") != backend.derived_counts("t-alone")

        assert len(cut.delete_message(written[40].id)) == 40
        assert backend.derived_counts("t-cut") == backend.derived_counts("t-alone")
        assert cut.record().active_leaf_id == written[39].id
        assert {h.message.id for h in cut.search("walrus number 63")} <= {
            m.id for m in written[:40]
        }


def test_deleting_a_conversation_empties_every_table_derived_from_it(backend: Backend) -> None:
    with open_full(backend) as memory:
        doomed = memory.scope("t-doomed", "alice")
        control = memory.scope("t-control", "alice")
        conv, _ = populate(memory, doomed, control)
        kept_memory = doomed.remember("I prefer aisle seats.").memory
        assert kept_memory is not None
        # the memory's vector is filled after the write: counted before it is, the memory's
        # rows would differ from after the delete for a reason that is not the delete
        assert memory.wait_for_vectors(30)
        assert_populated(backend, doomed.tenant, "conversation")
        before = backend.derived_counts(doomed.tenant)
        kept = backend.derived_counts(control.tenant)

        conv.delete()
        assert_emptied(backend, doomed.tenant, "conversation")
        after = backend.derived_counts(doomed.tenant)
        # the user's memories are not the conversation's: their rows stay
        for table in backend.derived_tables("memory"):
            assert after[table] == before[table] > 0, table
        assert backend.derived_counts(control.tenant) == kept
        with pytest.raises(convmem.NotFound):
            doomed.conversation(conv.id)
        with pytest.raises(convmem.NotFound):
            conv.pinned()
        assert doomed.conversations() == []
        assert [j for j in memory.jobs() if j.tenant_id == doomed.tenant] == []
        text = exported_text(doomed)
        assert "walrus" not in text and conv.id not in text.replace(f'"object_id": "{conv.id}"', "")
        assert [m.id for m in doomed.memories.list()] == [kept_memory.id]


def _remembered(scope: convmem.Scope) -> list[str]:
    notice = scope.remember("My favourite airline is Finnair.")
    assert notice.memory is not None
    return [notice.memory.id]


def _updated(scope: convmem.Scope) -> list[str]:
    first = scope.remember("My favourite airline is Finnair.").memory
    assert first is not None
    second = scope.memories.update(first.id, "My favourite airline is Finnair, then KLM.").memory
    assert second is not None and second.supersedes_id == first.id
    return [second.id, first.id]


@pytest.mark.parametrize("write", [_remembered, _updated], ids=["memory", "updated-memory"])
def test_deleting_a_memory_empties_every_table_derived_from_it(
    backend: Backend, write: object
) -> None:
    assert callable(write)
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        doomed = memory.scope("t-doomed", "alice")
        ids: list[str] = write(doomed)
        control = memory.scope("t-control", "alice")
        write(control)
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        assert_populated(backend, doomed.tenant, "memory")
        kept = backend.derived_counts(control.tenant)

        assert sorted(doomed.memories.delete(ids[0])) == sorted(ids)
        assert_emptied(backend, doomed.tenant, "memory")
        assert backend.derived_counts(control.tenant) == kept
        for memory_id in ids:
            with pytest.raises(convmem.NotFound):
                doomed.memories.get(memory_id)
        assert doomed.search_memories("Finnair airline") == []
        assert doomed.memories.list(status=None) == []
        assert "Finnair" not in exported_text(doomed)
        ctx = doomed.create_conversation().assemble("Which airline do I like?")
        assert "Finnair" not in json.dumps(ctx.messages) and ctx.report.memory_ids == []
        assert [h.memory.text for h in control.search_memories("Finnair")]


def test_forgetting_through_a_message_empties_the_memory_tables(backend: Backend) -> None:
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        alice = memory.scope("t-doomed", "alice")
        conv = alice.create_conversation()
        conv.append("user", "Remember that my favourite airline is Finnair.")
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        assert_populated(backend, alice.tenant, "memory")
        notice = conv.append("user", "Forget that my favourite airline is Finnair.").notices
        assert [n.status for n in notice] == ["forgotten"]
        assert_emptied(backend, alice.tenant, "memory")
        assert alice.search_memories("Finnair") == []


def test_delete_all_empties_every_derived_table_of_the_user(backend: Backend) -> None:
    with open_full(backend) as memory:
        doomed = memory.scope("t-doomed", "alice")
        control = memory.scope("t-control", "alice")
        conv, _ = populate(memory, doomed, control)
        doomed.remember("I prefer aisle seats.")
        doomed.pin("Be brief.")
        doomed.set_memory_enabled(True)
        control.remember("I prefer aisle seats.")
        assert memory.wait_for_vectors(30)  # vectors are filled after the write
        kinds: tuple[RecordKind, ...] = ("conversation", "memory")
        for kind in kinds:
            assert_populated(backend, doomed.tenant, kind)
        kept = backend.derived_counts(control.tenant)

        counts = doomed.delete_all()
        assert sum(counts.values()) > 0
        for kind in kinds:
            assert_emptied(backend, doomed.tenant, kind)
        assert backend.derived_counts(control.tenant) == kept
        assert doomed.conversations() == [] and doomed.pinned() == []
        assert doomed.memories.list(status=None) == []
        with pytest.raises(convmem.NotFound):
            doomed.conversation(conv.id)
        data = doomed.export()["data"]
        assert {
            table: rows for table, rows in data.items() if rows and table != "audit_events"
        } == {}
        # the audit keeps that it happened, by whom, without content
        assert "user.deleted_all" in [e.action for e in doomed.audit()]
        assert "walrus" not in json.dumps(data, default=str)
        ctx = doomed.create_conversation().assemble("Which seat?", model=SMALL)
        assert ctx.report.memory_ids == []


def test_retention_empties_every_table_derived_from_an_idle_conversation(
    backend: Backend,
) -> None:
    with open_full(backend) as memory:
        doomed = memory.scope("t-doomed", "alice")
        control = memory.scope("t-control", "alice")  # no retention period
        with written_days_ago(40):
            conv, _ = populate(memory, doomed, control)
        # set after the scenario: its worker would apply it as it ran
        memory.set_tenant_policy("t-doomed", retention_days=30)
        assert_populated(backend, doomed.tenant, "conversation")
        kept = backend.derived_counts(control.tenant)

        assert memory.apply_retention() == {"t-doomed": 1}
        assert_emptied(backend, doomed.tenant, "conversation")
        assert backend.derived_counts(control.tenant) == kept
        with pytest.raises(convmem.NotFound):
            doomed.conversation(conv.id)
        assert [e.actor for e in doomed.audit() if e.action == "conversation.deleted"] == [
            "retention"
        ]


def _delete_message(scope: convmem.Scope, conv: convmem.Conversation, turn: str) -> None:
    conv.delete_message(turn)


def _delete_conversation(scope: convmem.Scope, conv: convmem.Conversation, turn: str) -> None:
    conv.delete()


def _delete_everything(scope: convmem.Scope, conv: convmem.Conversation, turn: str) -> None:
    scope.delete_all()


@pytest.mark.parametrize(
    "delete",
    [_delete_message, _delete_conversation, _delete_everything],
    ids=["message", "conversation", "delete_all"],
)
def test_deleted_words_are_nowhere_in_the_database(backend: Backend, delete: object) -> None:
    """Not in any row of any table — index and full-text internals included (DESIGN 12)."""
    assert callable(delete)
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        chat(conv, 0, 20)
        turn = conv.append("user", "The xylokrator panel was repainted yesterday.").id
        conv.append("assistant", "The xylokrator panel, noted.")
        chat(conv, 22, 30)
        assert "xylokrator" in backend.dump().lower()  # the probe sees it before
        delete(alice, conv, turn)
        assert "xylokrator" not in backend.dump().lower()
