"""SQLite ranks a query and its widened form from one read of the wider query's candidates and
their stored counts; the narrower ranking must be the one its own query gives, inflections and
all."""

from __future__ import annotations

import convmem
from convmem.store import Window
from convmem.store.sqlite.stems import STEMS

TURNS = [
    "My hobbies? Painting, mostly, and some camping in the summer.",
    "We camped by the lake; the hobby shop sold us the tent.",
    "Incredibly, the café by the campsite was open all night.",
    "I paint on Sundays and my painter friend joins me.",
    "The weather was grey all week.",
    "Hobby painters meet at the café on Thursdays.",
]


def test_stems_are_the_indexs_own() -> None:
    # FTS5's Porter stemmer, where a Python one would differ (incredibli, a, café)
    assert STEMS.of(["incredibly", "as", "café", "camping", "camped", "3pm"]) == {
        "incredibly": ("incred",), "as": ("as",), "café": ("cafe",), "camping": ("camp",),
        "camped": ("camp",), "3pm": ("3pm",),
    }  # fmt: skip


def test_the_narrow_ranking_is_the_narrow_querys(memory: convmem.Memory) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    for i, text in enumerate(TURNS):
        conv.append("user" if i % 2 == 0 else "assistant", text)
    cases = [
        (["hobbies"], ["hobby", "painting"]),  # extra words that are inflections of a term
        (["camping", "cafe"], ["camped", "campsite", "incredibly"]),
        (["painter"], ["paint", "painters", "painting"]),
    ]
    with memory.store.read() as tx:
        for terms, extra in cases:
            narrow, wide = tx.search_messages_widened(
                "acme", "alice", conv.id, terms, extra, window=Window(), limit=10
            )
            alone = tx.search_messages("acme", "alice", conv.id, terms, window=Window(), limit=10)
            both = tx.search_messages(
                "acme", "alice", conv.id, [*terms, *extra], window=Window(), limit=10
            )
            assert narrow == alone, terms
            assert wide == both, terms
            assert len(wide) > len(narrow) or wide != narrow
