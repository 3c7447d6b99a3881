"""Consent on real SQLite: memory is saved, superseded or forgotten only when the user asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import convmem
from convmem import InvalidInput, NotFound
from convmem.memory.intent import detect_intent

CORPUS = Path(__file__).resolve().parents[1] / "data" / "consent.jsonl"


def memory_rows(scope: convmem.Scope) -> list[tuple[str, str]]:
    """Every memory of the principal, whatever its status (on any backend)."""
    return [(m.text, m.status) for m in scope.memories.list(status=None, include_expired=True)]


@pytest.mark.parametrize(
    ("message", "saved"),
    [
        ("Please remember that I'm vegetarian.", "I'm vegetarian."),
        ("Thanks! Also, don't forget that my partner is vegan.", "my partner is vegan."),
        ("Could you please remember that I'm a teacher?", "I'm a teacher."),
        ("From now on, answer in German.", "answer in German."),
        # a German or Dutch clause after "dass"/"dat" is kept as a whole sentence (issue 36)
        ("Merk dir, dass ich in Hamburg wohne.", "Ich wohne in Hamburg."),
        ("N'oubliez pas que mon fils s'appelle Hugo.", "mon fils s'appelle Hugo."),
        # an allergy is health data, refused in every language; the request here is about work
        ("Recuerda que soy profesor de música.", "soy profesor de música."),
        ("Ricordati che abito a Torino.", "abito a Torino."),
        ("Lembre-se de que sou vegetariano.", "sou vegetariano."),
        ("Onthoud dat ik in Utrecht woon.", "Ik woon in Utrecht."),
    ],
)
def test_an_explicit_request_saves_what_was_asked(
    alice: convmem.Scope, message: str, saved: str
) -> None:
    notices = alice.create_conversation().append("user", message).notices
    assert [(n.status, n.text) for n in notices] == [("saved", saved)]
    assert [m.text for m in alice.memories.list(status="confirmed")] == [saved]


@pytest.mark.parametrize(
    "message",
    [
        "Remember when we went camping and it rained all night?",
        "I remember my first bike, it was bright red.",
        "Do you remember what I told you about my trip?",
        "Remember, it takes time to form a bond, don't rush!",
        "Just remember to pause and breathe.",
        "Don't forget to take pictures!",
        "And remember, I'm always here for you.",
        "She told me to remember that I'm stronger than I think.",
        "Should I remember that I have a dentist appointment?",
        "Weißt du noch, als wir in Italien waren?",
        "N'oublie pas de prendre des photos !",
        "¿Te acuerdas de cuando fuimos a la playa?",
        "Ricorda che non sei solo.",
        "Lembre-se que você não está sozinho.",
        "Onthoud dat je er niet alleen voor staat.",
    ],
)
def test_reminiscence_advice_reported_speech_and_questions_save_nothing(
    alice: convmem.Scope, message: str
) -> None:
    assert alice.create_conversation().append("user", message).notices == ()
    assert memory_rows(alice) == []


def test_a_reminder_to_the_assistant_is_never_a_confirmed_memory(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    assert conv.append("user", "Remember to bring sunscreen to the beach.").notices == ()
    assert conv.append("user", "Please remember to email the landlord tomorrow.").notices == ()
    assert memory_rows(alice) == []


def test_a_pronoun_takes_its_antecedent_from_the_same_message_or_is_refused(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    resolved = conv.append("user", "My sister Anna is vegan. Remember that she hates mushrooms.")
    assert [(n.status, n.text) for n in resolved.notices] == [
        ("saved", "my sister Anna hates mushrooms.")
    ]
    before = memory_rows(alice)
    for unclear in ("Remember that she hates mushrooms.", "Please remember that!"):
        notices = conv.append("user", unclear).notices
        assert [(n.status, n.reason) for n in notices] == [("blocked", "unclear_reference")]
    assert memory_rows(alice) == before


def test_small_talk_never_supersedes_a_real_memory(alice: convmem.Scope) -> None:
    aisle = alice.remember("I prefer aisle seats on flights.").memory
    assert aisle is not None
    conv = alice.create_conversation()
    for message in (
        "Remember when we talked about seats last week? That was funny.",
        "Do you remember which seats we had?",
        "I prefer window seats, is that ok?",
        "Remember, window seats are the best for photos!",
    ):
        assert all(n.status != "saved" for n in conv.append("user", message).notices)
    assert alice.memories.get(aisle.id).status == "confirmed"
    assert all(e.action != "memory.superseded" for e in alice.audit())


@pytest.mark.parametrize(
    ("statement", "old", "new"),
    [
        ("Merk dir, dass meine Lieblingsfarbe {} ist.", "Gelb", "Blau"),
        ("Merk dir: meine Lieblingsfarbe ist {}.", "Gelb", "Blau"),
        ("Souviens-toi que mon plat préféré est la {}.", "raclette", "tartiflette"),
        ("Recuerda que mi deporte favorito es el {}.", "pádel", "ciclismo"),
        ("Ricorda che la mia città preferita è {}.", "Torino", "Bologna"),
        ("Lembre-se de que minha fruta favorita é a {}.", "manga", "goiaba"),
        ("Onthoud dat mijn favoriete kaas {} is.", "Gouda", "Leerdammer"),
    ],
)
def test_a_correction_in_another_language_supersedes(
    alice: convmem.Scope, statement: str, old: str, new: str
) -> None:
    """ "My X is Y" names the slot X in every language of the grammar, so a newer value replaces
    the older instead of standing beside it as a second current memory."""
    conv = alice.create_conversation()
    (first,) = conv.append("user", statement.format(old)).notices
    (second,) = conv.append("user", statement.format(new)).notices
    assert first.memory is not None
    assert second.memory is not None
    assert second.status == "saved"
    assert [m.id for m in second.superseded] == [first.memory.id]
    assert [m.id for m in alice.memories.list()] == [second.memory.id]


def test_different_slots_in_another_language_stand_side_by_side(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "Merk dir, dass meine Lieblingsfarbe Gelb ist.")
    conv.append("user", "Merk dir, dass mein Lieblingsessen Käsespätzle ist.")
    conv.append("user", "Souviens-toi que ma ville préférée est Lyon.")
    conv.append("user", "Souviens-toi que mon plat préféré est la raclette.")
    assert len(alice.memories.list()) == 4


def test_a_proposal_never_supersedes(alice: convmem.Scope) -> None:
    aisle = alice.remember("I prefer aisle seats.").memory
    assert aisle is not None
    notices = alice.create_conversation().append("user", "I prefer window seats.").notices
    assert [n.status for n in notices] == ["proposed"]
    assert alice.memories.get(aisle.id).status == "confirmed"


def test_a_supersession_names_both_texts_and_restore_undoes_it(alice: convmem.Scope) -> None:
    aisle = alice.remember("I prefer aisle seats.").memory
    assert aisle is not None
    conv = alice.create_conversation()
    notice = conv.append("user", "Remember that I prefer window seats.").notices[0]
    assert notice.status == "saved" and notice.text == "I prefer window seats."
    assert [(m.id, m.text) for m in notice.superseded] == [(aisle.id, "I prefer aisle seats.")]
    window = notice.memory
    assert window is not None and window.supersedes_id == aisle.id
    assert alice.memories.get(aisle.id).status == "superseded"

    restored = alice.memories.restore(aisle.id)
    assert restored.status == "confirmed"
    assert [m.text for m in alice.memories.list()] == ["I prefer aisle seats."]
    with pytest.raises(NotFound):
        alice.memories.get(window.id)
    assert "I prefer aisle seats" in json.dumps(conv.assemble("Which seat?").messages)
    actions = [e.action for e in alice.audit()]
    assert "memory.restored" in actions


def test_restore_refuses_what_it_cannot_undo(alice: convmem.Scope, bob: convmem.Scope) -> None:
    first = alice.remember("I live in Porto.").memory
    assert first is not None
    with pytest.raises(InvalidInput):
        alice.memories.restore(first.id)  # current: nothing to undo
    second = alice.remember("I live in Lisbon.").memory
    assert second is not None and second.supersedes_id == first.id
    with pytest.raises(NotFound):
        bob.memories.restore(first.id)  # another principal's id
    alice.memories.delete(second.id)  # the replacement and its history are gone
    with pytest.raises(NotFound):
        alice.memories.restore(first.id)
    assert memory_rows(alice) == []


@pytest.mark.parametrize(
    ("memory_text", "request_text"),
    [
        ("I prefer aisle seats.", "Forget that I prefer aisle seats."),
        ("My home address is 12 Elm Street.", "Please forget my home address."),
        ("I'm vegetarian.", "Delete the memory about my vegetarian diet."),
        ("Ich wohne in Berlin.", "Vergiss, dass ich in Berlin wohne."),
        ("J'habite à Paris.", "Oublie que j'habite à Paris."),
        ("Vivo en Madrid.", "Olvida que vivo en Madrid."),
        # as people say it, and across languages (issue 36)
        ("My home city is Lisbon.", "Forget that I live in Lisbon."),
        ("I drink coffee every morning.", "forget about the coffee"),
        ("My cat is called Miso.", "Forget what you know about my cat."),
        ("I live in Oslo.", "Please forget where I live."),
        ("I live in Lisbon.", "Vergiss, dass ich in Lissabon wohne."),
        ("Meine Katze heißt Mimi.", "Vergiss bitte alles, was du über meine Katze weißt."),
        ("Je bois du café le matin.", "Oublie l'histoire du café."),
        ("Bebo café por las mañanas.", "Olvídate del café."),
        ("Il mio gatto si chiama Leo.", "Dimentica tutto quello che sai sul mio gatto."),
        ("Bebo café todas as manhãs.", "Esquece-te do café."),
        ("Mijn kat heet Pluis.", "Vergeet alles wat je over mijn kat weet."),
    ],
)
def test_a_forget_request_deletes_what_it_names(
    alice: convmem.Scope, memory_text: str, request_text: str
) -> None:
    kept = alice.remember("My dog is called Rex.").memory
    doomed = alice.remember(memory_text).memory
    assert kept is not None and doomed is not None
    notices = alice.create_conversation().append("user", request_text).notices
    assert [(n.status, n.memory_ids) for n in notices] == [("forgotten", (doomed.id,))]
    assert [r.text for r in notices[0].records] == [memory_text]  # the notice names what went
    assert [m.id for m in alice.memories.list()] == [kept.id]


@pytest.mark.parametrize(
    "message",
    [
        "Forget about the flights for now.",
        "I always forget my keys.",
        "Forgot my coffee this morning.",
        "Forget my last question, it was silly.",
        "Don't forget my flights!",
        "Oublie les vols pour l'instant.",
        "Vergiss die Flüge erstmal.",
    ],
)
def test_forget_look_alikes_delete_nothing(alice: convmem.Scope, message: str) -> None:
    for text in ("I booked flights to Oslo.", "My keys are on the hook.", "I drink coffee."):
        alice.remember(text)
    before = alice.memories.list()
    assert alice.create_conversation().append("user", message).notices == ()
    assert alice.memories.list() == before


def test_an_ambiguous_forget_asks_instead_of_deleting(alice: convmem.Scope) -> None:
    seat = alice.remember("I prefer aisle seats.").memory
    table = alice.remember("I prefer tables by the window in restaurants.").memory
    assert seat is not None and table is not None
    notices = alice.create_conversation().append("user", "Please forget my preferences.").notices
    assert [(n.status, n.reason, set(n.memory_ids)) for n in notices] == [
        ("ambiguous", "several_matches", {seat.id, table.id})
    ]
    assert {m.id for m in alice.memories.list()} == {seat.id, table.id}


def test_proposals_stand_alone_once_per_subject_per_conversation(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    for dangling in ("I love them for that.", "I love your icecream so much!",
                     "I love escaping to that world.", "I like jazz, do you?"):  # fmt: skip
        assert conv.append("user", dangling).notices == ()
    first = conv.append("user", "I live in Porto.").notices
    assert [(n.status, n.text) for n in first] == [("proposed", "I live in Porto.")]
    assert conv.append("user", "I live in Porto, by the river.").notices == ()
    other = alice.create_conversation().append("user", "I live in Porto, by the river.")
    assert [n.status for n in other.notices] == ["proposed"]
    assert {m.status for m in alice.memories.list()} == {"proposed"}


def test_the_labelled_corpus_reads_as_labelled() -> None:
    """Every line of the consent corpus gets its label: requests in seven languages save,
    look-alikes of each kind do not (the benchmark reports the same figures)."""
    kinds = {"remember": "save", "forget": "forget", "propose": "propose"}
    wrong = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        intent = detect_intent(row["text"])
        got = "none" if intent is None or intent.refusal else kinds[intent.kind]
        if got != row["label"]:
            wrong.append((row["group"], row["label"], got, row["text"]))
    assert wrong == []
    assert len(CORPUS.read_text(encoding="utf-8").splitlines()) >= 300
