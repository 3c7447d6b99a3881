"""Health and beliefs of people other than the user, named: main let every disclosure below
through (the rules looked for "I", "my brother" or "he", so "my brother John", "Sarah" or "Tom, my
dad," escaped them), in a remember request too. A name is any word, so the rules take one only
where a sentence starts; pets and objects introduced by "my", "the" or "our" still pass."""

from __future__ import annotations

from pathlib import Path

import pytest

import convmem
from convmem.memory.policy import BlockReason, check_text

HEALTH, SENSITIVE = BlockReason.HEALTH, BlockReason.SENSITIVE_CATEGORY


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("My brother John has diabetes.", HEALTH),
        ("John has diabetes.", HEALTH),
        ("Bob is HIV positive.", HEALTH),
        ("My friend Ana is pregnant.", HEALTH),
        ("Ana (my sister) was diagnosed with cancer.", HEALTH),
        ("Tom, my dad, has cancer.", HEALTH),
        ("My neighbour's kid has leukemia.", HEALTH),
        ("Mark Jensen suffers from depression.", HEALTH),
        ("Remember that Lucy is on chemotherapy.", HEALTH),
        ("btw Kevin has epilepsy, so no strobe lights.", HEALTH),
        ("My coworker Dave is gay.", SENSITIVE),
        ("Priya is a devout Muslim.", SENSITIVE),
        ("Mi hermano Juan tiene diabetes.", HEALTH),
        ("Mein Bruder Jonas hat Krebs.", HEALTH),
        ("Ma sœur Claire a un cancer.", HEALTH),
        ("Marco ha il diabete.", HEALTH),
        ("Ma fille Léa est diabétique.", HEALTH),
        ("Meine Frau Anna ist schwanger.", HEALTH),
        ("Mijn broer Tim heeft diabetes.", HEALTH),
    ],
)
def test_someone_else_s_disclosure_is_refused(text: str, reason: BlockReason) -> None:
    decision = check_text(text)
    assert (decision.allowed, decision.reason) == (False, reason)


@pytest.mark.parametrize(
    "text",
    [
        "My dog has diabetes.",
        "My dog Rex has diabetes.",
        "The study has cancer patients.",
        "It has depression as a theme.",
        "Our app has allergy filters.",
        "My brother John has a new car.",
        "John has a meeting at 3pm.",
        "Sarah is a great cook.",
        "Dave is the new team lead.",
        "Alex is conservative with estimates.",
        "Jira is black and white about deadlines.",
        "Mi perro tiene diabetes.",
        "Mon chat est diabétique.",
        "Mein Hund hat Krebs.",
        "Mein Bruder Jonas hat ein neues Auto.",
        "Ma sœur Claire est avocate.",
    ],
)
def test_ordinary_statements_about_people_and_pets_pass(text: str) -> None:
    assert check_text(text).allowed


def test_a_remember_request_about_a_named_person_stores_nothing(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "m.db") as memory:
        scope = memory.scope("acme", "alice")
        notice = scope.remember("My daughter Emma has asthma.")
        assert (notice.status, notice.reason) == ("blocked", "health")
        reply = scope.create_conversation(title="t").append(
            "user", "Remember that Sarah has been battling breast cancer."
        )
        # a chat message's request about someone else is not taken as the user's (no notice);
        # whatever the reading, nothing is kept
        assert all(n.status == "blocked" for n in reply.notices)
        assert scope.memories.list() == []
