"""Near-duplicate suppression (convmem.retrieval.novelty) on texts of several languages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convmem.retrieval.novelty import NEAR_DUPLICATE, novel, similar, word_set


@pytest.mark.parametrize(
    ("a", "b", "duplicate"),
    [
        ("Turn 4: how do we handle retries in the webhook? ticket BK-4004",
         "Turn 44: how do we handle retries in the webhook? ticket BK-4044", True),
        ("Ich habe am Montag den Schlüssel im Büro vergessen.",
         "Ich habe am Dienstag den Schlüssel im Büro vergessen.", True),
        ("J'ai oublié la clé au bureau lundi.", "La réunion de lundi est annulée.", False),
        ("My sister lives in Lisbon.", "My sister moved to Porto last year for work.", False),
        ("", "", False),
    ],
)  # fmt: skip
def test_similar_is_a_jaccard_over_the_words_search_uses(a: str, b: str, duplicate: bool) -> None:
    assert similar(word_set(a), word_set(b), NEAR_DUPLICATE) is duplicate


def test_novel_keeps_rank_order_and_drops_repeats_of_shown_and_taken() -> None:
    ranked = [
        "the build failed on step 3 again",
        "the build failed on step 4 again",  # a repeat of the first
        "we moved the release to Thursday",
        "lunch is at noon",  # a repeat of what the window shows
        "the tests for the parser are flaky",
    ]
    shown = ["Lunch is at noon!"]
    assert novel(ranked, str, shown, limit=10) == [ranked[0], ranked[2], ranked[4]]
    assert novel(ranked, str, shown, limit=2) == [ranked[0], ranked[2]]
    assert novel(ranked, str, [], limit=10, threshold=1.01) == ranked  # nothing is a duplicate


def test_a_near_duplicate_holding_a_word_the_message_asks_about_is_kept() -> None:
    window = ["Question 95: what about item 95 of the offsite plan and its budget?"]
    ranked = ["Question 3: what about item 3 of the offsite plan and its budget?"]
    assert novel(ranked, str, window, asked=["decide", "item", "3"], limit=5) == ranked
    assert novel(ranked, str, window, asked=["decide", "item", "7"], limit=5) == []


_WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "build", "failed", "step", "again", "release", "moved"]
)
_TEXTS = st.lists(_WORDS, max_size=12).map(" ".join)


@given(
    st.lists(_TEXTS, max_size=12),
    st.lists(_TEXTS, max_size=12),
    st.lists(_WORDS, max_size=2),
    st.sampled_from([0.0, 0.3, 0.5, NEAR_DUPLICATE, 0.9, 1.0]),
)
def test_novel_compares_by_size_as_it_would_compare_every_pair(
    ranked: list[str], shown: list[str], asked: list[str], threshold: float
) -> None:
    """Only sets of comparable size are compared: the choice is the one comparing every pair."""
    seen = [word_set(text) for text in shown]
    expected = []
    for text in ranked:
        mine = word_set(text)
        if any(
            similar(mine, other, threshold) and not (mine - other) & set(asked) for other in seen
        ):
            continue
        seen.append(mine)
        expected.append(text)
    got = novel(ranked, str, shown, asked=asked, limit=len(ranked), threshold=threshold)
    assert got == expected
