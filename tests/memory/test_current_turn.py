"""The current turn wins, read by the intent grammar: a memory is outdated when the newest thing
the user says about its slot gives another value, in each of the grammar's languages; the same
value, a question, a quote or another slot leave it current."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from convmem.memory.current_turn import outdated_memories
from convmem.memory.slots import classify, slot_value
from convmem.model.memory import MemoryRecord

SAVED = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def memory(text: str, memory_id: str = "mem_1") -> MemoryRecord:
    category, subject = classify(text)
    return MemoryRecord(
        id=memory_id, tenant_id="acme", user_id="alice", scope="user", category=category,
        subject_key=subject, text=text, source_kind="user_explicit", source_message_id=None,
        status="confirmed", supersedes_id=None, conflicts_with_id=None, sensitivity="none",
        purpose="personalization", created_at=SAVED, updated_at=SAVED, expires_at=None,
    )  # fmt: skip


# (language, the memory, a turn that changes it, a turn that repeats it)
CASES = [
    ("en", "My home city is Porto.", "We moved last month. I live in Lisbon now.",
     "I live in Porto, near the river."),
    ("en", "I prefer aisle seats.", "Book me window seats this time.", "Aisle seats, as always."),
    ("en", "I live in Lisbon.", "I moved to Faro last spring.", "I live in Lisbon, by the sea."),
    ("en", "My favourite colour is blue.", "My favourite colour is green these days.",
     "My favourite colour is blue, still."),
    ("de", "Ich wohne in Berlin.", "Seit Mai wohne ich nicht mehr dort. Ich wohne in Hamburg.",
     "Ich wohne in Berlin, in Kreuzberg."),
    ("de", "Meine Lieblingsfarbe ist Blau.", "Ich glaube, dass meine Lieblingsfarbe Gelb ist.",
     "Meine Lieblingsfarbe ist Blau, wie immer."),
    ("fr", "Je m'appelle Claire.", "Je m'appelle Léa, en fait.", "Je m'appelle Claire Martin."),
    ("fr", "Mon plat préféré est la raclette.", "Mon plat préféré est la fondue maintenant.",
     "Mon plat préféré est toujours la raclette."),
    ("es", "Vivo en Madrid.", "Ahora vivo en Sevilla.", "Vivo en Madrid desde 2019."),
    ("es", "Mi color favorito es el rojo.", "Mi color favorito es el verde.",
     "Mi color favorito es el rojo oscuro."),
    ("it", "Mi chiamo Marco.", "Mi chiamo Luca, non Marco.", "Mi chiamo Marco Rossi."),
    ("it", "Il mio colore preferito è il verde.", "Il mio colore preferito è il viola.",
     "Il mio colore preferito è il verde."),
    ("pt", "Moro em Lisboa.", "Agora moro em Porto.", "Moro em Lisboa, perto do rio."),
    ("pt", "A minha cor favorita é o azul.", "A minha cor favorita é o amarelo.",
     "A minha cor favorita é o azul."),
    ("nl", "Ik woon in Utrecht.", "Ik woon in Gent.", "Ik woon in Utrecht, vlak bij het station."),
    ("nl", "Mijn favoriete kaas is Gouda.", "Ik denk dat mijn favoriete kaas Edam is.",
     "Mijn favoriete kaas is Gouda."),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "saved", "changed", "repeated"), CASES)
def test_a_new_value_for_the_slot_outdates_the_memory_and_the_same_value_does_not(
    lang: str, saved: str, changed: str, repeated: str
) -> None:
    record = memory(saved)
    assert slot_value(saved) is not None, lang  # the memory names a slot with a value
    assert outdated_memories([record], [changed]) == {record.id}, (lang, changed)
    assert outdated_memories([record], [repeated]) == set(), (lang, repeated)
    # the newest statement decides: a change taken back, or a change made after repeating
    assert outdated_memories([record], [repeated, changed]) == set(), lang
    assert outdated_memories([record], [changed, repeated]) == {record.id}, lang


def test_questions_quotes_and_other_slots_change_nothing() -> None:
    home = memory("My home city is Porto.", "mem_home")
    seat = memory("I prefer aisle seats.", "mem_seat")
    gym = memory("Remember that the gym closes at nine.", "mem_gym")  # no slot: never outdated
    turns = [
        "Do I live in Lisbon now?",  # a question says nothing
        '"I live in Lisbon now," my sister wrote.',  # someone else's words
        "My favourite colour is green.",  # another slot
        "The gym closes at ten now.",
    ]
    assert outdated_memories([home, seat, gym], turns) == set()
    assert outdated_memories([home, seat, gym], ["I live in Lisbon now."]) == {"mem_home"}


def test_the_last_sentence_of_a_turn_is_its_newest_word() -> None:
    home = memory("My home city is Porto.")
    assert outdated_memories([home], ["I live in Lisbon now. No wait, I live in Porto."]) == set()
    assert outdated_memories([home], ["I live in Porto. Sorry: I live in Lisbon."]) == {"mem_1"}
