"""Forget and replace as people say them, and newer wins only when clearly newer (issue 36 items 1
and 2), through the public API on a real store (SQLite; PostgreSQL with
CONVMEM_TEST_BACKEND=postgresql)."""

from __future__ import annotations

import pytest

import convmem


def say(user: convmem.Scope, text: str) -> tuple[convmem.MemoryNotice, ...]:
    return user.create_conversation().append("user", text).notices


def current(user: convmem.Scope) -> list[str]:
    return [m.text for m in user.memories.list(status="confirmed")]


def test_a_forget_naming_another_value_asks_and_one_naming_nothing_answers(
    alice: convmem.Scope,
) -> None:
    home = alice.remember("I live in Lisbon.").memory
    assert home is not None
    (asked,) = say(alice, "Forget that I live in Paris.")
    assert (asked.status, asked.reason, asked.memory_ids) == (
        "ambiguous", "different_value", (home.id,)
    )  # fmt: skip
    assert [r.text for r in asked.records] == ["I live in Lisbon."]
    (nothing,) = say(alice, "Forget what you know about my cat.")
    assert (nothing.status, nothing.reason, nothing.memory_ids) == ("forgotten", "no_match", ())
    assert current(alice) == ["I live in Lisbon."]


@pytest.mark.parametrize(
    "message",
    [
        "Forget about the coffee for now, let's order tea.",
        "Forget about work, enjoy your weekend!",
        "Forget about it.",
        "Olvídate del café por ahora.",
        "Vergiss den Kaffee erstmal, wir müssen los.",
    ],
)
def test_forget_about_look_alikes_change_nothing(alice: convmem.Scope, message: str) -> None:
    alice.remember("I drink coffee every morning.")
    before = alice.memories.list()
    assert say(alice, message) == ()
    assert alice.memories.list() == before


@pytest.mark.parametrize(
    ("message", "saved"),
    [
        ("Merk dir, dass ich jetzt in Köln wohne.", "Ich wohne jetzt in Köln."),
        ("Merk dir bitte, dass ich nach Leipzig gezogen bin.", "Ich bin nach Leipzig gezogen."),
        ("Onthoud dat ik nu in Leuven woon.", "Ik woon nu in Leuven."),
        ("Onthoud dat ik naar Brugge ben verhuisd.", "Ik ben naar Brugge verhuisd."),
        ("Remember that I moved to Berlin last month.", "I moved to Berlin last month."),
        ("Ricorda che adesso abito a Milano.", "adesso abito a Milano."),
        ("Store this in your memory: I moved to Denver.", "I moved to Denver."),
        ("Recuerda que ahora vivo en Valencia.", "ahora vivo en Valencia."),
    ],
)
def test_a_request_that_moves_the_home_replaces_it_with_a_whole_sentence(
    alice: convmem.Scope, message: str, saved: str
) -> None:
    old = alice.remember("I live in Hamburg.").memory
    assert old is not None
    (notice,) = say(alice, message)
    assert (notice.status, notice.text) == ("saved", saved)
    assert [m.id for m in notice.superseded] == [old.id]
    assert current(alice) == [saved]  # one home, not two


def test_a_plain_statement_that_moves_a_kept_slot_is_suggested_not_saved(
    alice: convmem.Scope,
) -> None:
    # nothing the user did not ask for changes what they kept: "I moved to Faro" is a
    # suggestion, the kept home stays current until the user confirms the move
    old = alice.remember("I live in Lisbon.").memory
    assert old is not None
    (moved,) = say(alice, "I moved to Faro.")
    assert moved.status == "proposed" and moved.memory is not None
    assert current(alice) == ["I live in Lisbon."]
    confirmed = alice.memories.confirm(moved.memory.id)
    assert confirmed.supersedes_id == old.id
    assert current(alice) == ["I moved to Faro."]
    alice.memories.undo(moved.memory.id)  # one click back: the kept home, the suggestion
    assert current(alice) == ["I live in Lisbon."]


def test_a_habit_that_merely_differs_is_a_conflict_to_confirm(alice: convmem.Scope) -> None:
    tea = alice.remember("I drink tea.").memory
    assert tea is not None
    (notice,) = say(alice, "Remember that I drink coffee.")
    assert (notice.status, notice.reason, notice.text) == (
        "proposed",
        "conflict",
        "I drink coffee.",
    )
    assert [r.text for r in notice.records] == ["I drink tea."]  # both texts
    assert current(alice) == ["I drink tea."]  # nothing replaced silently
    coffee = notice.memory
    assert coffee is not None and coffee.conflicts_with_id == tea.id
    confirmed = alice.memories.confirm(coffee.id)
    assert confirmed.supersedes_id == tea.id and confirmed.conflicts_with_id is None
    assert confirmed.source_kind == "user_explicit"
    assert current(alice) == ["I drink coffee."]
    assert alice.memories.get(tea.id).status == "superseded"
    # undone: the older back, the suggestion a conflicting suggestion again
    undone = alice.memories.undo(coffee.id)
    assert undone.memory is not None and undone.memory.status == "proposed"
    assert undone.memory.conflicts_with_id == tea.id
    assert current(alice) == ["I drink tea."]


def test_a_declined_conflict_keeps_the_older_and_a_newer_marker_replaces(
    alice: convmem.Scope,
) -> None:
    alice.remember("Ich trinke Tee.")
    (notice,) = say(alice, "Merk dir, dass ich Kaffee trinke.")
    assert (notice.status, notice.reason, notice.text) == (
        "proposed",
        "conflict",
        "Ich trinke Kaffee.",
    )
    alice.memories.reject(notice.memory.id)  # type: ignore[union-attr]
    assert current(alice) == ["Ich trinke Tee."]
    (newer,) = say(alice, "Merk dir: ich trinke jetzt Kaffee.")
    assert newer.status == "saved" and [m.text for m in newer.superseded] == ["Ich trinke Tee."]
    assert current(alice) == ["ich trinke jetzt Kaffee."]


def test_an_edit_replaces_even_a_habit(alice: convmem.Scope) -> None:
    tea = alice.remember("I drink tea.").memory
    assert tea is not None
    edited = alice.memories.update(tea.id, "I drink coffee.")
    assert edited.status == "saved" and [m.id for m in edited.superseded] == [tea.id]
    assert current(alice) == ["I drink coffee."]


@pytest.mark.parametrize(
    ("kept", "request_text"),
    [
        ("I live in Munich.", "Vergiss, dass ich in München wohne."),
        ("Ich wohne in Köln.", "Forget that I live in Cologne."),
        ("J'habite à Venise.", "Dimentica che abito a Venezia."),
        ("Vivo en Ginebra.", "Oublie que j'habite à Genève."),
    ],
)
def test_a_place_named_in_another_language_is_forgotten(
    alice: convmem.Scope, kept: str, request_text: str
) -> None:
    alice.remember(kept)
    alice.remember("I play chess.")
    say(alice, request_text)
    assert current(alice) == ["I play chess."]


def test_another_place_is_not_forgotten_for_a_translated_one(alice: convmem.Scope) -> None:
    alice.remember("I live in Milan.")
    say(alice, "Vergiss, dass ich in München wohne.")
    assert current(alice) == ["I live in Milan."]
