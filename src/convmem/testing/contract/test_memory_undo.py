"""A change to a memory asked about before it is made and undone whole after, on every backend:
the engine names what confirming or editing would replace (the page asks it, not a copy of the
rule), and one undo puts back every memory the change replaced — a confirmed suggestion is a
suggestion again, an edit's replacements all come back."""

from __future__ import annotations

import pytest

import convmem
from convmem.domain.memories import save_memory
from convmem.errors import InvalidInput, NotFound
from convmem.store.retry import write_retried


def _imported(memory: convmem.Memory, scope: convmem.Scope, text: str) -> convmem.MemoryRecord:
    notice = write_retried(memory.store, lambda tx: save_memory(
        tx, scope.principal, text, source_kind="import", status="confirmed", subject="seat",
    ))  # fmt: skip
    assert notice.memory is not None
    return notice.memory


def test_an_edit_that_replaced_two_memories_is_undone_whole(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    aisle = alice.remember("I prefer aisle seats on long flights.", subject="seat").memory
    assert aisle is not None
    window = _imported(memory, alice, "I prefer window seats.")  # another source: a conflict
    assert {m.id for m in alice.memories.list()} == {aisle.id, window.id}

    asked = alice.memories.would_replace(window.id, "Window seats on short flights, please.")
    assert [m.id for m in asked] == [aisle.id]  # besides the edited memory itself
    notice = alice.memories.update(window.id, "Window seats on short flights, please.")
    assert notice.memory is not None
    assert {m.id for m in notice.superseded} == {aisle.id, window.id}
    assert [m.id for m in alice.memories.list()] == [notice.memory.id]

    undone = alice.memories.undo(notice.memory.id)
    assert undone.memory is None  # the edit's text is gone
    assert {m.id for m in undone.restored} == {aisle.id, window.id}
    assert {m.id for m in alice.memories.list()} == {aisle.id, window.id}
    with pytest.raises(NotFound):
        alice.memories.get(notice.memory.id)
    with pytest.raises(InvalidInput):
        alice.memories.undo(aisle.id)  # nothing made it current since: no change to undo


def test_undoing_a_confirmation_makes_it_a_suggestion_again(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    aisle = alice.remember("I prefer aisle seats.").memory
    assert aisle is not None
    (proposed,) = alice.create_conversation().append("user", "I prefer window seats.").notices
    suggestion = proposed.memory
    assert proposed.status == "proposed" and suggestion is not None

    assert [m.id for m in alice.memories.would_replace(suggestion.id)] == [aisle.id]
    confirmed = alice.memories.confirm(suggestion.id)
    assert confirmed.supersedes_id == aisle.id
    assert alice.memories.get(aisle.id).status == "superseded"

    undone = alice.memories.undo(suggestion.id)
    assert undone.memory is not None and undone.memory.id == suggestion.id
    assert undone.memory.status == "proposed" and undone.memory.text == "I prefer window seats."
    assert undone.memory.source_kind == suggestion.source_kind
    assert [m.id for m in undone.restored] == [aisle.id]
    assert alice.memories.get(aisle.id).status == "confirmed"
    # it can be confirmed again, and undone again, from the new state only
    alice.memories.confirm(suggestion.id)
    alice.memories.restore(aisle.id)  # restore is the same undo, seen from the replaced memory
    assert alice.memories.get(suggestion.id).status == "proposed"
    assert alice.memories.get(aisle.id).status == "confirmed"
    actions = [e.action for e in alice.audit()]
    assert actions.count("memory.unconfirmed") == 2 and "memory.restored" in actions


def test_asking_and_undoing_refuse_what_is_not_theirs_or_not_current(
    memory: convmem.Memory,
) -> None:
    alice, bob = memory.scope("acme", "alice"), memory.scope("acme", "bob")
    porto = alice.remember("I live in Porto.").memory
    assert porto is not None
    for call in (lambda: bob.memories.undo(porto.id),
                 lambda: bob.memories.would_replace(porto.id, "I live in Faro.")):  # fmt: skip
        with pytest.raises(NotFound):
            call()
    with pytest.raises(InvalidInput):
        alice.memories.would_replace(porto.id)  # confirmed: there is nothing to confirm
    lisbon = alice.remember("I live in Lisbon.").memory
    assert lisbon is not None
    with pytest.raises(InvalidInput):
        alice.memories.would_replace(porto.id, "I live in Faro.")  # superseded: not current
    assert [e.action for e in bob.audit()] == []
    undone = alice.memories.undo(lisbon.id)  # a plain save: deleted, what it replaced back
    assert undone.memory is None and [m.id for m in undone.restored] == [porto.id]
    assert [m.text for m in alice.memories.list()] == ["I live in Porto."]
