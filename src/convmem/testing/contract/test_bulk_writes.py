"""Batched writes on every backend: ``insert_messages`` and ``index_messages`` with many rows of
several conversations in one transaction (the import path) give what one append at a time gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.importers.bulk import ImportNode, ImportTree, import_trees
from convmem.model.messages import NewMessage

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _tree(source_id: str, topic: str, turns: int, *, edit: bool = True) -> ImportTree:
    nodes = []
    for n in range(turns):
        when = START + timedelta(minutes=n)
        if n % 2 == 0:
            message = NewMessage(role="user", content=f"{topic} question {n}", created_at=when)
        else:
            text = f"{topic} answer {n} about ferries"
            message = NewMessage(role="assistant", content=text, created_at=when)
        nodes.append(ImportNode(f"{source_id}-{n}", f"{source_id}-{n - 1}" if n else None, message))
    if edit:  # a second branch
        second = NewMessage(role="user", content=f"{topic} edited question", created_at=START)
        nodes.append(ImportNode(f"{source_id}-edit", f"{source_id}-0", second))
    return ImportTree(source_id, topic, START, nodes, active_key=f"{source_id}-{turns - 1}")


def test_many_conversations_in_one_batch_read_back_whole(alice: convmem.Scope) -> None:
    trees = [_tree(f"src-{n}", f"topic{n}", 6) for n in range(4)]
    report = import_trees(alice, "test", trees)
    assert (report.conversations, report.messages) == (4, 28)
    records = {str(r.title): r for r in alice.conversations()}
    assert sorted(records) == ["topic0", "topic1", "topic2", "topic3"]
    for n in range(4):
        conv = alice.conversation(records[f"topic{n}"].id)
        branch = conv.branch()
        assert [m.metadata["ext_id"] for m in branch] == [f"src-{n}-{k}" for k in range(6)]
        assert [m.depth for m in branch] == list(range(6))
        assert [m.parent_id for m in branch[1:]] == [m.id for m in branch[:-1]]
        assert [m.content for m in conv.siblings(branch[1].id)] == [
            f"topic{n} answer 1 about ferries", f"topic{n} edited question"]  # fmt: skip
        # every row was indexed, within its own conversation only
        hits = conv.search(f"topic{n} ferries")
        assert hits and {h.message.conversation_id for h in hits} == {conv.id}
        assert all(f"topic{n}" in h.message.content for h in hits)
        # the counts were stored: the assembled request fits and holds the branch
        result = conv.assemble("And the ferries?")
        assert f"topic{n} answer 5 about ferries" in str(result.messages)


def test_a_batch_and_single_appends_agree_on_search(alice: convmem.Scope) -> None:
    import_trees(alice, "test", [_tree("a", "lisbon", 4, edit=False)])
    (record,) = alice.conversations()
    bulk = alice.conversation(record.id)
    by_hand = alice.create_conversation()
    for node in _tree("a", "lisbon", 4, edit=False).nodes:
        by_hand.append(node.message.role, node.message.content,
                       created_at=node.message.created_at)  # fmt: skip
    assert [h.message.content for h in bulk.search("lisbon ferries")] == [
        h.message.content for h in by_hand.search("lisbon ferries")]  # fmt: skip
    later = bulk.append("user", "lisbon ferries at night?")  # the index keeps working after
    assert bulk.search("night")[0].message.id == later.id


def test_a_source_failing_midway_keeps_the_batches_written_before(alice: convmem.Scope) -> None:
    """Batches are planned in a thread ahead of the writes: an error reading the source comes
    out of ``import_trees`` itself, after the batches before it were committed, and a second
    run writes the rest once."""

    def source(fail: bool) -> Iterator[ImportTree]:
        yield _tree("ok-1", "first", 4)
        yield _tree("ok-2", "second", 4)
        if fail:
            raise convmem.InvalidInput("the export is cut off")
        yield _tree("ok-3", "third", 4)

    with pytest.raises(convmem.InvalidInput, match="cut off"):
        import_trees(alice, "test", source(fail=True), batch_messages=1)
    assert sorted(str(r.title) for r in alice.conversations()) == ["first", "second"]
    again = import_trees(alice, "test", source(fail=False), batch_messages=1)
    assert (again.already_imported, again.conversations) == (2, 1)
    assert sorted(str(r.title) for r in alice.conversations()) == ["first", "second", "third"]


def test_a_streamed_tree_of_another_user_ends_the_import_there(alice: convmem.Scope) -> None:
    """A list of trees naming another user is refused whole; a stream (read as it is written,
    never held whole) is checked tree by tree: the batches before the foreign tree stay."""
    foreign = replace(_tree("bob-1", "bobs", 4), owner="bob")

    def source() -> Iterator[ImportTree]:
        yield _tree("ok-1", "first", 4)
        yield foreign
        yield _tree("ok-3", "third", 4)

    with pytest.raises(convmem.InvalidInput, match="name another user"):
        import_trees(alice, "test", [_tree("ok-0", "zeroth", 4), foreign], batch_messages=1)
    assert alice.conversations() == []
    with pytest.raises(convmem.InvalidInput, match="name another user"):
        import_trees(alice, "test", source(), batch_messages=1)
    assert [str(r.title) for r in alice.conversations()] == ["first"]
