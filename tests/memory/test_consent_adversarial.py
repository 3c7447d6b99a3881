"""Consent look-alikes written fresh for this file (none is in tests/data/consent.jsonl), in the
seven languages, played through a real conversation on SQLite: nothing is saved, superseded or
deleted unless the user asked."""

from __future__ import annotations

import pytest

import convmem
from convmem.memory.intent import detect_intent

LOOKALIKES = [
    "I can't remember whether I locked the door.",
    "Remember the Alamo!",
    "My grandmother always said: remember that life is short.",
    "Remember me to your sister.",
    "Forget it, never mind.",
    "I forgot my umbrella at home.",
    "Ich kann mich nicht erinnern, ob ich abgeschlossen habe.",
    "Merk dir das nicht, war nur ein Witz.",
    "Vergiss es, egal.",
    "Je ne me souviens pas de son nom.",
    "Souviens-toi de l'été dernier, c'était un film.",
    "Oublie ça, ce n'est pas grave.",
    "No me acuerdo de su nombre.",
    "Recuerda que mañana es festivo, dijo mi jefe.",
    "Olvídalo, no importa.",
    "Non ricordo dove ho messo le chiavi.",
    "Lascia perdere, dimentica.",
    "Não me lembro do nome dele.",
    "Esquece, não faz mal.",
    "Ik weet niet meer waar ik mijn sleutels heb gelaten.",
    "Vergeet het maar, maakt niet uit.",
]


@pytest.mark.parametrize("message", LOOKALIKES)
def test_a_lookalike_is_no_request(message: str) -> None:
    intent = detect_intent(message)
    assert intent is None or intent.kind == "propose"


def test_lookalikes_change_no_memory(alice: convmem.Scope) -> None:
    kept = alice.remember("I live in Boston.")
    assert kept.memory is not None
    conversation = alice.create_conversation()
    for message in LOOKALIKES:
        notices = conversation.append("user", message).notices
        assert [n.status for n in notices if n.status != "proposed"] == []
    current = alice.memories.list(status="confirmed")
    assert [(m.id, m.text) for m in current] == [(kept.memory.id, "I live in Boston.")]


@pytest.mark.parametrize(
    ("message", "saved"),
    [
        ("ＰＬＥＡＳＥ ＲＥＭＥＭＢＥＲ that I work night shifts.", "I work night shifts."),
        ("Please remem\u200bber that I work night shifts.", "I work night shifts."),
        ("Bitte merk dir, dass ich Linkshänder bin.", "Ich bin Linkshänder."),
        ("Per favore ricorda che lavoro di notte.", "lavoro di notte."),
        ("Onthoud alsjeblieft dat ik linkshandig ben.", "Ik ben linkshandig."),
    ],
)
def test_a_request_in_disguised_letters_is_still_a_request(
    alice: convmem.Scope, message: str, saved: str
) -> None:
    notices = alice.create_conversation().append("user", message).notices
    assert [(n.status, n.text) for n in notices] == [("saved", saved)]


@pytest.mark.parametrize(
    ("message", "target"),
    [
        ("Vergiss bitte, dass ich in Berlin wohne.", "Ich wohne in Berlin"),
        ("Oublie que j'habite à Lyon.", "j'habite à Lyon"),
        ("Olvida que vivo en Madrid.", "vivo en Madrid"),
        ("Dimentica che abito a Roma.", "abito a Roma"),
        ("Esquece que moro em Lisboa.", "moro em Lisboa"),
        ("Vergeet dat ik in Gent woon.", "Ik woon in Gent"),
    ],
)
def test_a_forget_request_names_its_target(message: str, target: str) -> None:
    intent = detect_intent(message)
    assert intent is not None
    assert (intent.kind, intent.text) == ("forget", target)
