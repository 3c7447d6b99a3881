"""The message tree on every backend: branches, the active leaf, deleting subtrees, refusals that
write nothing, scoping. (SQLite's own rows for these: ``tests/store/sqlite/test_tree_rows.py``.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import convmem
from convmem import InvalidMessage, NotFound, ToolCall
from convmem.testing.harness import Backend


def test_append_builds_a_linear_branch_with_metadata_and_import_dates(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation(title="Trip")
    when = datetime(2023, 5, 8, 13, 56)
    first = conv.append(
        "user", "Remember that I prefer aisle seats.", metadata={"ext_id": "D1:3"}, created_at=when
    )
    second = conv.append("assistant", "Noted.")
    assert second.parent_id == first.id
    assert [m.id for m in conv.branch()] == [first.id, second.id]
    stored = conv.message(first.id)
    assert stored.metadata == {"ext_id": "D1:3"}
    assert stored.created_at == when.replace(tzinfo=UTC)
    assert stored.depth == 0
    assert conv.message(second.id).depth == 1
    assert conv.record().active_leaf_id == second.id


def test_edit_makes_a_sibling_and_moves_the_leaf_old_branch_kept(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "What is 2+2?")
    a = conv.append("assistant", "4")
    edited = conv.edit(q.id, "What is 3+3?")
    assert edited.parent_id == q.parent_id
    assert [m.id for m in conv.siblings(q.id)] == [q.id, edited.id]
    assert [m.id for m in conv.branch()] == [edited.id]
    assert [m.id for m in conv.branch(a.id)] == [q.id, a.id]
    conv.switch_branch(a.id)
    assert conv.record().active_leaf_id == a.id


def test_regenerate_with_and_without_content(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "Tell me a joke")
    a1 = conv.append("assistant", "Joke one")
    a2 = conv.regenerate(a1.id, "Joke two")
    assert a2.parent_id == q.id
    assert [m.id for m in conv.siblings(a1.id)] == [a1.id, a2.id]
    assert conv.record().active_leaf_id == a2.id
    back = conv.regenerate(a2.id)
    assert back.id == q.id
    assert conv.record().active_leaf_id == q.id
    a3 = conv.append("assistant", "Joke three")
    assert [m.id for m in conv.siblings(a1.id)] == [a1.id, a2.id, a3.id]
    with pytest.raises(InvalidMessage):
        conv.regenerate(q.id, "not an assistant")


def test_append_under_an_explicit_parent_forks(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    root = conv.append("user", "root")
    conv.append("assistant", "one")
    fork = conv.append("assistant", "two", parent_id=root.id)
    assert fork.parent_id == root.id
    assert len(conv.siblings(fork.id)) == 2


def test_tool_results_must_answer_an_open_call_on_the_branch(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "weather and time?")
    conv.append("assistant", "", tool_calls=[ToolCall("c1", "weather"), ToolCall("c2", "clock")])
    conv.append("tool", "sunny", tool_call_id="c1")
    with pytest.raises(InvalidMessage, match="no open tool call"):
        conv.append("tool", "sunny again", tool_call_id="c1")  # already answered
    with pytest.raises(InvalidMessage, match="no open tool call"):
        conv.append("tool", "?", tool_call_id="c9")  # never called
    conv.append("tool", "12:00", tool_call_id="c2")
    conv.append("assistant", "Sunny, noon.")
    with pytest.raises(InvalidMessage, match="no open tool call"):
        conv.append("tool", "late", tool_call_id="c2")  # the run is over


@pytest.mark.parametrize(
    ("role", "content", "kwargs", "match"),
    [
        ("user", "", {}, "needs content"),
        ("user", "   ", {}, "needs content"),
        ("system", "", {}, "needs content"),
        ("assistant", "", {}, "content or tool calls"),
        ("wizard", "hi", {}, "unknown role"),
        ("user", "hi", {"tool_calls": [ToolCall("c", "f")]}, "only assistant"),
        ("user", "hi", {"tool_call_id": "c"}, "only tool messages"),
        ("tool", "r", {}, "needs the tool_call_id"),
        ("tool", "r", {"tool_call_id": "nope"}, "no open tool call"),
        ("assistant", "", {"tool_calls": [ToolCall("c", "f", "[1]")]}, "JSON object"),
        ("assistant", "", {"tool_calls": [ToolCall("c", "f", "{")]}, "JSON object"),
        ("assistant", "", {"tool_calls": [ToolCall("c", "f"), ToolCall("c", "g")]}, "twice"),
        ("assistant", "", {"tool_calls": [ToolCall("c", "")]}, "needs a name"),
        ("user", "hi", {"metadata": {"x": object()}}, "JSON"),
        ("user", "hi", {"metadata": {1: "x"}}, "string keys"),
        ("user", 42, {}, "must be a string"),
        ("user", "\ud800", {}, "unicode"),
    ],
)
def test_bad_messages_are_refused_and_write_nothing(
    alice: convmem.Scope,
    backend: Backend,
    role: str,
    content: object,
    kwargs: dict[str, object],
    match: str,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", "hello")
    before = backend.fingerprint()
    with pytest.raises(InvalidMessage, match=match):
        conv.append(role, content, **kwargs)  # type: ignore[arg-type]
    assert backend.fingerprint() == before


def test_content_above_the_limit_is_refused(backend: Backend) -> None:
    config = convmem.Config(max_content_bytes=100)
    with backend.open(config=config) as mem:
        conv = mem.scope("t", "u").create_conversation()
        with pytest.raises(convmem.ContentTooLarge) as info:
            conv.append("user", "x" * 101)
        assert info.value.size == 101
        assert info.value.limit == 100
        assert conv.branch() == []
        conv.append("user", "é" * 50)  # 100 bytes exactly


def test_unknown_parent_and_parent_in_another_conversation_are_not_found(
    alice: convmem.Scope, backend: Backend
) -> None:
    one = alice.create_conversation()
    two = alice.create_conversation()
    elsewhere = two.append("user", "in two")
    one.append("user", "in one")
    before = backend.fingerprint()
    with pytest.raises(NotFound):
        one.append("assistant", "x", parent_id="msg_DOESNOTEXIST")
    with pytest.raises(NotFound):
        one.append("assistant", "x", parent_id=elsewhere.id)
    with pytest.raises(NotFound):
        one.switch_branch(elsewhere.id)
    assert backend.fingerprint() == before


def test_another_principals_ids_are_not_found(
    memory: convmem.Memory, alice: convmem.Scope, bob: convmem.Scope, backend: Backend
) -> None:
    conv = alice.create_conversation(title="private")
    msg = conv.append("user", "secret plans")
    other_tenant = memory.scope("globex", "alice")
    before = backend.fingerprint()
    for intruder in (bob, other_tenant):
        with pytest.raises(NotFound):
            intruder.conversation(conv.id)
        assert intruder.conversations() == []
        forged = convmem.Conversation(intruder, conv.id)  # a handle built around a stolen id
        with pytest.raises(NotFound):
            forged.append("user", "hijack")
        with pytest.raises(NotFound):
            forged.message(msg.id)
        with pytest.raises(NotFound):
            forged.assemble("hello")
        with pytest.raises(NotFound):
            forged.delete()
        with pytest.raises(NotFound):
            forged.delete_message(msg.id)
        with pytest.raises(NotFound):
            forged.edit(msg.id, "changed")
    assert backend.fingerprint() == before
    assert conv.message(msg.id).content == "secret plans"


def test_delete_message_removes_its_subtree_and_moves_the_leaf(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    a = conv.append("user", "a")
    b = conv.append("assistant", "b")
    c = conv.append("user", "c")
    conv.append("assistant", "d", parent_id=b.id)
    deleted = conv.delete_message(b.id)
    assert set(deleted) >= {b.id, c.id}
    assert len(deleted) == 3
    assert [m.id for m in conv.messages()] == [a.id]
    assert conv.record().active_leaf_id == a.id


def test_bad_scope_and_urls(memory: convmem.Memory) -> None:
    with pytest.raises(convmem.InvalidInput):
        memory.scope("", "u")
    with pytest.raises(convmem.InvalidInput):
        memory.scope("t", "a\nb")
    with pytest.raises(convmem.InvalidInput):
        convmem.open("mysql://nope")


def test_deleting_another_branch_keeps_the_active_leaf(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    q = conv.append("user", "q")
    first = conv.append("assistant", "first answer")
    second = conv.regenerate(first.id, "second answer")
    follow = conv.append("user", "thanks")
    assert conv.delete_message(first.id) == [first.id]
    assert conv.record().active_leaf_id == follow.id
    assert [m.id for m in conv.branch()] == [q.id, second.id, follow.id]
    assert [m.id for m in conv.siblings(second.id)] == [second.id]


def test_a_reopened_database_keeps_everything(backend: Backend) -> None:
    with backend.open() as mem:
        conv = mem.scope("t", "u").create_conversation(title="kept")
        m = conv.append("user", "persist me")
    with backend.open() as mem:
        again = mem.scope("t", "u").conversation(conv.id)
        assert again.message(m.id).content == "persist me"
        assert again.record().title == "kept"
        assert again.record().active_leaf_id == m.id


def test_a_branch_window_reads_the_newest_messages_with_their_versions(
    alice: convmem.Scope, bob: convmem.Scope
) -> None:
    conv = alice.create_conversation()
    first = conv.append("user", "Question one?")
    edited = conv.edit(first.id, "Question one, better?")
    third = conv.edit(first.id, "Question one, best?")
    ids = [third.id]
    for n in range(9):
        ids.append(conv.append("assistant" if n % 2 == 0 else "user", f"turn {n}").id)
    window = conv.branch_window(limit=4)
    assert [v.message.id for v in window] == ids[-4:]
    assert all((v.number, v.count) == (1, 1) for v in window)
    # the page before ends at the oldest's parent, down to the root with its three versions
    earlier = conv.branch_window(window[0].message.parent_id, limit=100)
    assert [v.message.id for v in earlier] == ids[:-4]
    assert (earlier[0].number, earlier[0].count) == (3, 3)
    older = conv.branch_window(edited.id, limit=2)
    assert [(v.message.id, v.number, v.count) for v in older] == [(edited.id, 2, 3)]
    with pytest.raises(convmem.InvalidInput):
        conv.branch_window(limit=0)
    with pytest.raises(NotFound):
        bob.conversation(conv.id).branch_window(limit=5)


def test_child_counts_count_each_parents_children_in_one_read(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    conv = alice.create_conversation()
    root = conv.append("user", "a")
    conv.edit(root.id, "b")
    answer = conv.append("assistant", "c")
    conv.regenerate(answer.id, "d")
    conv.append("user", "e")
    other = alice.create_conversation()
    other.append("user", "elsewhere")
    with memory.store.read() as tx:
        counts = tx.child_counts("acme", conv.id, [None, answer.parent_id, answer.id, "nope"])
    assert counts == {None: 2, answer.parent_id: 2}
    with memory.store.read() as tx:
        assert tx.child_counts("acme", conv.id, []) == {}
        assert tx.child_counts("globex", conv.id, [None]) == {}
