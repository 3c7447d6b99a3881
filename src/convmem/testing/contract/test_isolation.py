"""Scope isolation under random operations: two tenants with two users each write, delete and
search in random order; every principal sees exactly its own rows — lists, searches and exports
never carry another's — and each other principal's ids are NotFound, whatever the call, with
nothing written by the attempt."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import convmem
from convmem.model.messages import Role
from convmem.testing.harness import Backend

WORDS = ("zebra", "quokka", "walrus", "lantern")
PRINCIPALS = [(tenant, user) for tenant in ("ta", "tb") for user in ("u1", "u2")]

principal = st.integers(0, len(PRINCIPALS) - 1)
index = st.integers(0, 7)
word = st.sampled_from(WORDS)
operation = st.one_of(
    st.tuples(st.just("conversation"), principal),
    st.tuples(st.just("append"), principal, index, word),
    st.tuples(st.just("remember"), principal, word, st.integers(0, 3)),
    st.tuples(st.just("delete_message"), principal, index, index),
    st.tuples(st.just("delete_memory"), principal, index),
    st.tuples(st.just("delete_conversation"), principal, index),
)


@dataclass
class Owned:
    """What one principal should have: conversations (message ids in branch order) and
    memory ids."""

    conversations: dict[str, list[str]] = field(default_factory=dict)
    memories: set[str] = field(default_factory=set)

    def all_ids(self) -> set[str]:
        messages = {m for ids in self.conversations.values() for m in ids}
        return set(self.conversations) | messages | self.memories


def apply(scope: convmem.Scope, owned: Owned, op: tuple[object, ...]) -> None:
    kind = op[0]
    conversations = sorted(owned.conversations)
    if kind == "conversation" or (kind == "append" and not conversations):
        owned.conversations[scope.create_conversation().id] = []
    elif kind == "append":
        _, _, n, w = op
        assert isinstance(n, int)
        conv_id = conversations[n % len(conversations)]
        role: Role = "user" if len(owned.conversations[conv_id]) % 2 == 0 else "assistant"
        message = scope.conversation(conv_id).append(role, f"the {w} is here ({scope.user})")
        owned.conversations[conv_id].append(message.id)
    elif kind == "remember":
        _, _, w, n = op
        notice = scope.remember(f"I like the {w} number {n}.")
        assert notice.memory is not None, notice.reason
        owned.memories.add(notice.memory.id)
    elif kind == "delete_message" and conversations:
        _, _, n, m = op
        assert isinstance(n, int) and isinstance(m, int)
        conv_id = conversations[n % len(conversations)]
        messages = owned.conversations[conv_id]
        if messages:
            at = m % len(messages)
            deleted = scope.conversation(conv_id).delete_message(messages[at])
            assert sorted(deleted) == sorted(messages[at:])
            del messages[at:]
    elif kind == "delete_memory" and owned.memories:
        _, _, n = op
        assert isinstance(n, int)
        doomed = sorted(owned.memories)[n % len(owned.memories)]
        owned.memories -= set(scope.memories.delete(doomed))
    elif kind == "delete_conversation" and conversations:
        _, _, n = op
        assert isinstance(n, int)
        conv_id = conversations[n % len(conversations)]
        scope.conversation(conv_id).delete()
        del owned.conversations[conv_id]


def assert_sees_exactly_its_own(scope: convmem.Scope, owned: Owned, foreign: set[str]) -> None:
    assert {c.id for c in scope.conversations(limit=1000)} == set(owned.conversations)
    listed = scope.memories.list(status=None, include_expired=True)
    assert {m.id for m in listed} == owned.memories
    for conv_id, message_ids in owned.conversations.items():
        conv = scope.conversation(conv_id)
        assert [m.id for m in conv.messages()] == message_ids
        for w in WORDS:
            assert {h.message.id for h in conv.search(w, k=50)} <= set(message_ids)
    for w in WORDS:
        assert {h.memory.id for h in scope.search_memories(w, k=50)} <= owned.memories
    exported = json.dumps(scope.export(), default=str)
    leaked = sorted(i for i in foreign if i in exported)
    assert leaked == [], "another principal's ids in the export"


def assert_cannot_reach(scope: convmem.Scope, other: Owned) -> None:
    own = sorted(scope.conversations(limit=1000), key=lambda c: c.id)
    for conv_id, message_ids in other.conversations.items():
        with pytest.raises(convmem.NotFound):
            scope.conversation(conv_id)
        forged = convmem.Conversation(scope, conv_id)  # a handle built around a stolen id
        with pytest.raises(convmem.NotFound):
            forged.append("user", "hijack")
        with pytest.raises(convmem.NotFound):
            forged.search("zebra")
        with pytest.raises(convmem.NotFound):
            forged.delete()
        for message_id in message_ids:
            with pytest.raises(convmem.NotFound):
                scope.message(message_id)
            with pytest.raises(convmem.NotFound):
                forged.delete_message(message_id)
            if own:
                mine = scope.conversation(own[0].id)
                with pytest.raises(convmem.NotFound):
                    mine.append("user", "graft", parent_id=message_id)
                with pytest.raises(convmem.NotFound):
                    mine.switch_branch(message_id)
    for memory_id in other.memories:
        with pytest.raises(convmem.NotFound):
            scope.memories.get(memory_id)
        with pytest.raises(convmem.NotFound):
            scope.memories.delete(memory_id)
        with pytest.raises(convmem.NotFound):
            scope.memories.update(memory_id, "I like the zebra a lot.")
        for act in (scope.memories.confirm, scope.memories.reject, scope.memories.resolve):
            with pytest.raises(convmem.NotFound):
                act(memory_id)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(st.tuples(principal, operation), max_size=16))
def test_principals_see_only_their_own_rows(
    backend: Backend, operations: list[tuple[int, tuple[object, ...]]]
) -> None:
    # One database for every example; each example's tenants are new, so the rows of earlier
    # examples are other principals' too.
    example = next(_examples)
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        scopes = [memory.scope(f"{t}{example}", u) for t, u in PRINCIPALS]
        owned = [Owned() for _ in scopes]
        # everyone starts with a conversation and a memory, all sharing the searched words
        baseline = [
            (n, op)
            for n in range(len(scopes))
            for op in (
                ("append", n, 0, "zebra"),
                ("append", n, 0, "walrus"),
                ("remember", n, "zebra", 9),
            )
        ]
        for who, op in baseline + operations:
            apply(scopes[who], owned[who], op)
        everything = [o.all_ids() for o in owned]
        for n, scope in enumerate(scopes):
            foreign = set().union(*(ids for m, ids in enumerate(everything) if m != n))
            assert_sees_exactly_its_own(scope, owned[n], foreign)
        before = backend.fingerprint()
        for n, m in itertools.permutations(range(len(scopes)), 2):
            assert_cannot_reach(scopes[n], owned[m])
        assert backend.fingerprint() == before  # the attempts wrote nothing


_examples = itertools.count()
