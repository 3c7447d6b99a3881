"""A German or Dutch clause after "dass"/"dat" is kept as the main clause a person would write:
the finite verb second, the rest in its order; a shape it cannot read gives None (the caller
then keeps the user's own sentence, never the fragment)."""

from __future__ import annotations

import pytest

from convmem.memory.clause_order import main_clause
from convmem.memory.intent import detect_intent


@pytest.mark.parametrize(
    ("lang", "clause", "main"),
    [
        ("de", "ich jetzt in Köln wohne", "Ich wohne jetzt in Köln."),
        ("de", "ich nach Berlin gezogen bin.", "Ich bin nach Berlin gezogen."),
        ("de", "ich kein Fleisch essen kann", "Ich kann kein Fleisch essen."),
        ("de", "meine Lieblingsfarbe Gelb ist", "Meine Lieblingsfarbe ist Gelb."),
        ("de", "mein Bruder Paul in Wien wohnt", "Mein Bruder Paul wohnt in Wien."),
        ("de", "meine kleine Schwester Tierärztin ist", "Meine kleine Schwester ist Tierärztin."),
        ("de", "ich jeden Tag um sechs aufstehe", "Ich stehe jeden Tag um sechs auf."),
        ("de", "ich ihm immer antworte", "Ich antworte ihm immer."),  # no "an" + "tworte"
        (
            "de",
            "ich in Köln wohne, seit ich zwanzig bin",
            "Ich wohne in Köln, seit ich zwanzig bin.",
        ),
        ("nl", "ik in Utrecht woon", "Ik woon in Utrecht."),
        ("nl", "ik naar Gent ben verhuisd", "Ik ben naar Gent verhuisd."),
        ("nl", "ik geen vlees kan eten", "Ik kan geen vlees eten."),
        ("nl", "mijn favoriete kaas Gouda is", "Mijn favoriete kaas is Gouda."),
        ("nl", "ik elke ochtend vroeg opsta", "Ik sta elke ochtend vroeg op."),
        ("nl", "ik niet meer in Gent woon maar in Luik", "Ik woon niet meer in Gent maar in Luik."),
    ],
)
def test_a_verb_final_clause_is_kept_in_main_clause_order(
    lang: str, clause: str, main: str
) -> None:
    assert main_clause(lang, clause) == main


@pytest.mark.parametrize(
    ("lang", "clause"),
    [
        ("de", "ich wohne in Köln"),  # already verb-second: the last word is a name, no verb
        ("de", "Köln schön ist"),  # no first-person subject
        ("nl", "ik woon in Gent"),
        ("fr", "je vis à Lyon"),
    ],
)
def test_a_shape_it_cannot_read_gives_none(lang: str, clause: str) -> None:
    assert main_clause(lang, clause) is None


def test_a_request_whose_clause_cannot_be_reordered_keeps_the_users_sentence() -> None:
    intent = detect_intent("Merk dir, dass ich wohne in Köln.")
    assert intent is not None and intent.kind == "remember"
    assert intent.text == "Merk dir, dass ich wohne in Köln."
