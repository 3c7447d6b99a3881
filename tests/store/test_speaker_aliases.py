"""A name one speaker of a two-person chat addresses the other by names that speaker in a search
(``convmem.entities.aliases``), on every backend: the turns are signed "Emi", the chat and the
questions call her "Kate". Derived from the entities and their sentences the store keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import convmem
from convmem.entities.aliases import addressed_by, speaker_aliases
from convmem.model.messages import Role

START = datetime(2024, 1, 8, 18, 0, tzinfo=UTC)


def two_person_chat(scope: convmem.Scope, third: str | None = None) -> tuple[str, list[str]]:
    """Elise calls Emi "Kate"; Elise also talks about her sister Anna, whom she never
    addresses. ``third``: a third named speaker says one line."""
    conv = scope.create_conversation()
    lines = [
        ("Elise", "Hey Kate, how was your weekend?"),
        ("Emi", "I went skiing in Colorado with my cousins."),
        ("Elise", "Thanks Kate! My sister Anna went skiing in Vermont, Anna loves skiing."),
        ("Emi", "Skiing is the best, I want to go again next month."),
        ("Elise", "That sounds great, Kate!"),
        ("Elise", "Anna says skiing in Vermont is cold."),
    ]
    if third:
        lines.append((third, "I never went skiing."))
    ids = []
    for i, (speaker, text) in enumerate(lines):
        role: Role = "user" if speaker == "Elise" else "assistant"
        message = conv.append(
            role, text, metadata={"name": speaker}, created_at=START + timedelta(minutes=i)
        )
        ids.append(message.id)
    return conv.id, ids


def aliases_of(memory: convmem.Memory, conversation_id: str, query: str) -> dict[str, str]:
    with memory.store.read() as tx:
        speakers = tx.conversation_speakers("acme", conversation_id)
        return dict(speaker_aliases(tx, "acme", "alice", conversation_id, query, speakers))


def test_a_name_one_speaker_addresses_the_other_by_is_the_others(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv_id, ids = two_person_chat(alice)
    assert aliases_of(memory, conv_id, "Where did Kate go skiing?") == {"Kate": "Emi"}
    # the search favours Emi's turns as if the question said "Emi"; without the alias the
    # turns that say "Kate" (Elise's) came first
    hits = alice.conversation(conv_id).search("Where did Kate go skiing?", k=3)
    assert hits[0].message.id == ids[1]


def test_a_third_person_talked_about_is_no_alias(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv_id, _ = two_person_chat(alice)
    assert aliases_of(memory, conv_id, "Where did Anna go skiing?") == {}
    assert aliases_of(memory, conv_id, "Where did Emi go skiing?") == {}  # a speaker: no read


def test_with_three_speakers_the_addressee_is_unknown(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv_id, _ = two_person_chat(alice, third="Bruno")
    assert aliases_of(memory, conv_id, "Where did Kate go skiing?") == {}


def test_another_users_chat_gives_no_alias(memory: convmem.Memory) -> None:
    conv_id, _ = two_person_chat(memory.scope("acme", "bob"))
    assert aliases_of(memory, conv_id, "Where did Kate go skiing?") == {}


def test_addresses_in_the_forms_chat_writes_them() -> None:
    for sentence in (
        "Hey Kate, how are you?",
        "thanks so much Kate!",
        "Kate, guess what happened",
        "That is so true, Kate!",
        "Good luck Kate",
        "Hola Kate, ¿qué tal?",
        "Merci Kate !",
    ):
        assert addressed_by(sentence, ["Kate"]), sentence
    for sentence in (
        "I went with Kate to the store.",
        "Kate went skiing.",
        "Kate and I went out",
        "My friend Kate is here",
    ):
        assert not addressed_by(sentence, ["Kate"]), sentence
