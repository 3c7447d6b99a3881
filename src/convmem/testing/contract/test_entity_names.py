"""How entity names are read on every backend: a short form of exactly one known person is
that person ("Melanie", then "Mel"; "Mel", then "Melanie"), never one of two; a capitalised
run that opens a sentence is recorded as its known rest ("Remember Jon" is Jon); and the two
store reads behind them and entity recall's specificity — names by prefix, indexed turns
counted — stay inside the principal's tenant and user."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import convmem
from convmem.store.ranking import Window
from convmem.testing.harness import Backend

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _people(scope: convmem.Scope) -> dict[str, set[str]]:
    return {e.name: set(e.aliases) for e in scope.entities.list(limit=500)}


def _say(conv: convmem.Conversation, *texts: str, name: str | None = None) -> None:
    for minute, text in enumerate(texts):
        metadata = {"name": name} if name else None
        conv.append("user", text, metadata=metadata, created_at=T0 + timedelta(minutes=minute))


def test_a_short_form_of_one_known_person_is_their_alias_in_either_order(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    _say(alice.create_conversation(), "I went hiking with Melanie.", "Thanks, Mel! See you.")
    assert _people(alice) == {"Melanie": {"Mel"}}
    bob = memory.scope("acme", "bob")
    _say(bob.create_conversation(), "Hey Mel, how are you?", "My friend Melanie Hart paints.")
    people = _people(bob)
    assert list(people) == ["Melanie Hart"]
    assert {"Mel", "Melanie"} <= people["Melanie Hart"]
    found = bob.entities.search("what does mel paint?")
    assert [e.name for e in found] == ["Melanie Hart"]


def test_a_short_form_of_two_known_people_or_too_short_is_nobodys(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    _say(
        alice.create_conversation(),
        "I met Annabel and Annette at the fair.",
        "Then Ann called, and so did Jo and Jonathan.",
    )
    people = _people(alice)
    assert people["Ann"] == set() and people["Annabel"] == set() and people["Annette"] == set()
    assert "Jo" not in people.get("Jonathan", set())


def test_a_speakers_nickname_joins_the_speaker(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    _say(conv, "I signed up for a pottery class.", name="Melanie")
    conv.append("assistant", "Wow Mel, that's great!", created_at=T0 + timedelta(hours=1))
    assert _people(alice) == {"Melanie": {"Mel"}}


def test_a_sentence_opening_run_is_recorded_as_its_known_rest(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    _say(
        alice.create_conversation(),
        "I had coffee with Jon today.",
        "Remember Jon's idea? Woohoo Jon! Grand Canyon was amazing.",
    )
    people = _people(alice)
    assert "Remember Jon" not in people and "Woohoo Jon" not in people
    assert "Grand Canyon" in people  # its rest, "Canyon", is no known name
    jon = next(e for e in alice.entities.list() if e.name == "Jon")
    assert jon.mention_count == 3


def test_a_never_store_short_form_is_not_kept_and_deletion_reaches_the_merged_facts(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    _say(conv, "I went hiking with Melanie.")
    doomed = conv.append("user", "Mel says her password is Sommer2024Kiwi!")
    said = conv.append("user", "Thanks, Mel, for the Quorblex jam.")
    melanie = alice.entities.get(next(e.id for e in alice.entities.list() if e.name == "Melanie"))
    assert "sommer2024kiwi" not in json.dumps(melanie.to_dict(), default=str).lower()
    assert said.id in {f.message_id for f in melanie.facts}
    assert doomed.id not in {f.message_id for f in melanie.facts}
    conv.delete_message(said.id)
    assert "quorblex" not in backend.dump().lower()


def test_names_by_prefix_and_turns_counted_stay_in_the_tenant_and_user(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    _say(conv, "I went hiking with Melanie.", "Then Melvin joined.", "Nothing else.")
    for other in (memory.scope("acme", "bob"), memory.scope("evil", "alice")):
        _say(other.create_conversation(), "I met Melissa there.", "And Melanie too.")
    with memory.store.read() as tx:
        found = tx.entities_named_prefix("acme", "alice", "mel", scopes=["user"], limit=10)
        assert sorted(e.name for e in found) == ["Melanie", "Melvin"]
        assert tx.entities_named_prefix("acme", "alice", "melanie", scopes=["user"], limit=10) == []
        assert (
            tx.entities_named_prefix("acme", "alice", "mel", scopes=["project:x"], limit=10) == []
        )
        assert tx.indexed_turn_count("acme", "alice", conv.id, window=Window(), cap=100) == 3
        assert tx.indexed_turn_count("acme", "alice", conv.id, window=Window(), cap=2) == 2
        assert tx.indexed_turn_count("acme", "bob", conv.id, window=Window(), cap=100) == 0
        assert tx.indexed_turn_count("evil", "alice", conv.id, window=Window(), cap=100) == 0
        later = Window(since=T0 + timedelta(minutes=1))
        assert tx.indexed_turn_count("acme", "alice", conv.id, window=later, cap=100) == 2
        assert (
            tx.indexed_turn_count("acme", "alice", conv.id, window=Window(max_depth=1), cap=9) == 1
        )
