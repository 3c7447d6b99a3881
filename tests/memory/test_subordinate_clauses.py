"""German and Dutch put the finite verb last in a subordinate clause ("Merk dir, dass ich
allergisch gegen Nüsse bin"), where the statement rules do not look for it: main let every one of
the disclosures below through, in a remember request too. The policy now reads such a clause in
main-clause order as well (``readings.main_clause_order``); ordinary clauses still pass."""

from __future__ import annotations

import pytest

from convmem.memory.policy import BlockReason, check_text
from convmem.memory.readings import main_clause_order


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Merk dir, dass ich allergisch gegen Nüsse bin.", BlockReason.HEALTH),
        ("Ich weiß, dass ich Diabetes habe.", BlockReason.HEALTH),
        ("Merk dir, dass ich an Asthma leide.", BlockReason.HEALTH),
        ("Ich sage es dir, weil ich katholisch bin.", BlockReason.SENSITIVE_CATEGORY),
        ("Du weißt ja, dass mein Bruder schwul ist.", BlockReason.SENSITIVE_CATEGORY),
        ("Onthoud dat ik allergisch ben voor pinda's.", BlockReason.HEALTH),
        ("Ik zeg het omdat ik diabetes heb.", BlockReason.HEALTH),
        # the clause cut out of its sentence, as a request's fragment is
        ("ich allergisch gegen Nüsse bin.", BlockReason.HEALTH),
    ],
)
def test_a_disclosure_in_a_subordinate_clause_is_refused(text: str, reason: BlockReason) -> None:
    decision = check_text(text)
    assert (decision.allowed, decision.reason) == (False, reason)


@pytest.mark.parametrize(
    "text",
    [
        "Ich glaube, dass ich heute müde bin.",
        "Merk dir, dass ich in Köln wohne.",
        "Onthoud dat ik in Utrecht woon.",
        "Ich weiß, dass das Passwortfeld leer ist.",
        "Er sagt, dass er Arzt ist.",
        "ich jetzt in Köln wohne.",
    ],
)
def test_ordinary_subordinate_clauses_pass(text: str) -> None:
    assert check_text(text).allowed


def test_the_reading_puts_the_verb_second() -> None:
    assert main_clause_order("Merk dir, dass ich allergisch gegen Nüsse bin.") == (
        "Merk dir, ich bin allergisch gegen Nüsse."
    )
    assert main_clause_order("I am allergic to peanuts.") == "I am allergic to peanuts."
