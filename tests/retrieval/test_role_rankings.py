"""In a user ↔ assistant chat each role's turns are ranked by their words among their own
(``convmem.domain.search.fusion_rankings``): the assistant's long replies, which repeat the
user's words, no longer hide the user's short statement of the fact."""

from __future__ import annotations

from datetime import UTC, datetime

import convmem
from convmem.domain.search import Candidates, QueryPlan, SearchOptions, fusion_rankings
from convmem.store.base import MessageHitRow

QUESTION = "Where is the team offsite?"
REPLY = (
    "For a team offsite, pick a venue the whole team can reach. A good team offsite mixes "
    "planning sessions with time outside; book the offsite early, since team offsite venues "
    "fill up in spring. Share the offsite agenda with the team a week ahead."
)


def _chat(alice: convmem.Scope) -> tuple[convmem.Conversation, str]:
    conv = alice.create_conversation()
    stated = conv.append("user", "Note: the team offsite is in Porto.")
    conv.append("assistant", REPLY)
    for topic in ("budget", "travel", "catering", "schedule"):
        conv.append("user", f"What about the {topic}?")
        conv.append("assistant", f"On the {topic}: {REPLY}")
    return conv, stated.id


def test_the_users_short_statement_is_not_hidden_by_long_replies(alice: convmem.Scope) -> None:
    conv, stated = _chat(alice)
    lexical = SearchOptions(retrievers=("lexical",), rank_roles_apart=True)
    apart = [h.message.id for h in conv.search(QUESTION, k=2, options=lexical)]
    assert stated in apart
    together = SearchOptions(retrievers=("lexical",), rank_roles_apart=False)
    whole = [h.message.id for h in conv.search(QUESTION, k=2, options=together)]
    assert stated not in whole  # the replies' repeated words outrank it in one ranking
    # the hits still name the retriever, not a role's share of it
    assert conv.search(QUESTION, k=1, options=lexical)[0].retrievers == ("lexical",)


def test_named_speakers_are_ranked_together(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    stated = conv.append("user", "Note: the team offsite is in Porto.", metadata={"name": "Ana"})
    for topic in ("budget", "travel", "catering", "schedule", "rooms"):
        conv.append("assistant", f"On the {topic}: {REPLY}", metadata={"name": "Rui"})
    options = SearchOptions(retrievers=("lexical",), rank_roles_apart=True)
    together = SearchOptions(retrievers=("lexical",), rank_roles_apart=False)
    ids = [h.message.id for h in conv.search(QUESTION, k=6, options=options)]
    assert ids == [h.message.id for h in conv.search(QUESTION, k=6, options=together)]
    assert stated.id in ids[2:]  # between people the long turns stay ahead: no split


def _row(key: str, speaker: str) -> MessageHitRow:
    return MessageHitRow(key, speaker, 0, 1.0, datetime(2024, 1, 1, tzinfo=UTC))


def test_only_word_rankings_are_split_and_each_role_keeps_its_order() -> None:
    rows = {
        "lexical": [_row("a1", "assistant"), _row("a2", "assistant"), _row("u1", "user")],
        "vector": [_row("a1", "assistant"), _row("u1", "user")],
    }
    plan = QueryPlan((), ("offsite",), QUESTION)
    split = fusion_rankings(
        Candidates(plan, rows, roles_only=True), SearchOptions(rank_roles_apart=True)
    )
    assert split == [("lexical", ["a1", "a2"]), ("lexical", ["u1"]), ("vector", ["a1", "u1"])]
    whole = [("lexical", ["a1", "a2", "u1"]), ("vector", ["a1", "u1"])]
    assert (
        fusion_rankings(
            Candidates(plan, rows, roles_only=False), SearchOptions(rank_roles_apart=True)
        )
        == whole
    )
    off = SearchOptions(rank_roles_apart=False)
    assert fusion_rankings(Candidates(plan, rows, roles_only=True), off) == whole
