"""The pure pieces of retrieval: query analysis, BM25 over candidates' stored counts, fusion,
expansion, index text."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from convmem.domain.indexing import vector_text
from convmem.domain.search import SearchOptions, plan_query
from convmem.errors import InvalidInput
from convmem.retrieval.fusion import Fused, boost, lift_by_neighbours, rrf
from convmem.retrieval.index import IndexedTurn, context_text, speaker_of, vocabulary
from convmem.retrieval.lexical import query_terms
from convmem.retrieval.recall import standing_out
from convmem.retrieval.vector import HashingEmbedder, normalise
from convmem.store.sqlite.accelerator import nearest_words
from convmem.store.sqlite.fts import View, bm25_scores, or_query
from convmem.store.sqlite.stems import STEMS, TOKENIZER
from convmem.store.sqlite.term_counts import column_terms, stored_tokens


def test_query_terms_drop_stopwords_names_and_single_letters() -> None:
    assert query_terms("What did Caroline's sister paint in 2022, a b 7?", drop=["caroline"]) == [
        "sister",
        "paint",
        "2022",
        "7",
    ]


def test_plan_strips_speaker_names_for_the_vector_query() -> None:
    plan = plan_query("What is Caroline's identity?", ["Caroline", "Melanie"])
    assert plan.names == ("Caroline",)
    assert plan.terms == ("identity",)
    assert plan.vector_text == "What is identity?"
    assert plan_query("Caroline?", ["Caroline"]).terms == ("caroline",)


@given(st.text())
def test_or_query_quotes_every_term(text: str) -> None:
    query = or_query(query_terms(text), columns=("body", "ctx"))
    if query is not None:
        assert query.startswith("{body ctx} : (") and query.count('"') % 2 == 0


def _candidate(key: str, body: str, ctx: str = "") -> tuple[str, tuple[str, str], int]:
    """A candidate as the index stores it: its columns' term counts and its length."""
    counted = column_terms(body), column_terms(ctx)
    return key, (counted[0].counts, counted[1].counts), counted[0].words + counted[1].words


def _view(*terms: str) -> View:
    return View(terms, STEMS.of(terms))


def test_bm25_prefers_rare_terms_and_short_documents() -> None:
    candidates = [
        _candidate("rare", "pottery class"),
        _candidate("common", "the class fun"),
        _candidate("common2", "another class"),
        _candidate("common3", "a class"),
        _candidate("common4", "one class"),
        _candidate("long", "pottery " + "word " * 50),
        _candidate("ctx", "nothing", "pottery class"),
    ]
    scores = bm25_scores(candidates, 100, (1.0, 0.5), _view("pottery", "class"))
    assert scores["rare"] > scores["long"] > 0
    assert scores["rare"] > scores["common"]
    assert scores["rare"] > scores["ctx"] > 0  # a neighbour's words count, at half weight
    stemmed = bm25_scores([_candidate("x", "We camped.")], 10, (1.0, 0.5), _view("camping"))
    assert stemmed["x"] > 0
    twice = bm25_scores([_candidate("x", "camping, camped")], 10, (1.0, 0.5), _view("camping"))
    assert twice["x"] > stemmed["x"]  # every inflection counts for the word
    # two inflections asked: each counts the form closest to it, not the other's too
    both = bm25_scores([_candidate("x", "camping, camped")], 10, (1.0, 0.5),
                       _view("camping", "camped"))  # fmt: skip
    apart = bm25_scores([_candidate("x", "camping")], 10, (1.0, 0.5), _view("camping", "camped"))
    assert both["x"] == 2 * apart["x"]


def test_rrf_sums_ranks_and_names_retrievers() -> None:
    fused = rrf([("lexical", ["a", "b", "c"]), ("vector", ["b", "d"])], k=10)
    assert [f.key for f in fused] == ["b", "a", "d", "c"]
    assert fused[0].retrievers == ("lexical", "vector")
    assert fused[0].score == 1 / 12 + 1 / 11
    boosted = boost(fused, {"d"}, 1.2)
    assert [f.key for f in boosted][:3] == ["b", "d", "a"]  # 1.2 / 12 > 1 / 11


def test_neighbour_lift_adds_a_share_of_the_best_adjacent_score() -> None:
    fused = [Fused("a", 0.4, ("vector",)), Fused("b", 0.3, ("vector",)),
             Fused("c", 0.3, ("vector",)), Fused("x", 0.2, ("lexical",))]  # fmt: skip
    # b sits next to a (the best hit); c has no fused neighbour; x has no known position
    lifted = lift_by_neighbours(fused, {"a": 5, "b": 6, "c": 9}, 0.25)
    assert [f.key for f in lifted] == ["a", "b", "c", "x"]
    score = {f.key: f.score for f in lifted}
    assert score["a"] == 0.4 + 0.25 * 0.3
    assert score["b"] == 0.3 + 0.25 * 0.4
    assert score["c"] == 0.3 and score["x"] == 0.2
    assert lifted[0].retrievers == ("vector",)
    # a lift can reorder: c overtakes b once its neighbour (8) is a strong hit
    reordered = lift_by_neighbours(
        [*fused, Fused("d", 0.39, ())], {"a": 5, "b": 1, "c": 9, "d": 8}, 0.25
    )
    assert [f.key for f in reordered][:3] == ["d", "a", "c"]
    assert lift_by_neighbours(fused, {"a": 5, "b": 6}, 0.0) == fused


def test_expansion_finds_near_words_of_the_vocabulary() -> None:
    embedder = HashingEmbedder()
    vocab = ["painting", "painter", "swimming", "camping"]
    vocab_matrix = embedder.embed(vocab)
    terms = ["paintings"]
    extra = nearest_words(embedder.embed(terms), terms, vocab, vocab_matrix, min_similarity=0.5)
    assert extra[0] == "painting" and "swimming" not in extra
    assert np.allclose(np.linalg.norm(normalise(np.ones((2, 3))), axis=1), 1.0)


def test_context_stays_within_a_session() -> None:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    turn = IndexedTurn("b", "user", None, at, "user: b")
    before = IndexedTurn("a", "assistant", None, at - timedelta(minutes=5), "assistant: a")
    next_day = IndexedTurn("c", "assistant", None, at + timedelta(days=1), "assistant: c")
    assert context_text(turn, before, next_day) == "assistant: a"
    labelled = IndexedTurn("d", "user", "2", at, "user: d")
    other = IndexedTurn("e", "user", "3", at, "user: e")
    assert context_text(labelled, other, None) == ""
    assert speaker_of("user", {"name": " Caroline "}) == "Caroline"
    assert speaker_of("assistant", {}) == "assistant"
    assert vocabulary(["Caroline went camping, the 3 dogs"], exclude=["caroline"]) == {
        "went",
        "camping",
        "dogs",
    }


def test_standing_out_keeps_the_head_within_a_share_of_the_best_score() -> None:
    ranked = [
        Fused(k, s, ("lexical",)) for k, s in [("a", 0.5), ("b", 0.2), ("c", 0.15), ("d", 0.1)]
    ]
    assert [f.key for f in standing_out(ranked, 0.3)] == ["a", "b", "c"]  # 0.15 = 0.3 x 0.5
    assert [f.key for f in standing_out(ranked, 1.0)] == ["a"]
    assert standing_out(ranked, 0) == ranked
    assert standing_out([], 0.3) == []


@given(st.lists(st.floats(min_value=1e-6, max_value=10), min_size=1), st.floats(0, 1))
def test_standing_out_is_a_prefix_holding_the_best(scores: list[float], share: float) -> None:
    ranked = [Fused(str(i), s, ()) for i, s in enumerate(sorted(scores, reverse=True))]
    kept = standing_out(ranked, share)
    assert kept == ranked[: len(kept)] and kept[0] == ranked[0]
    assert all(f.score >= share * ranked[0].score for f in kept)


def test_a_turns_vector_text_repeats_its_statements_without_the_name() -> None:
    body = "Caroline: Thanks, Mel! I went to a support group. How was your week?"
    assert vector_text("Caroline", body) == f"{body}\nThanks, Mel! I went to a support group."
    assert vector_text("Caroline", "Caroline: How are you? Busy?") == "Caroline: How are you? Busy?"
    # full-width and Arabic question marks end questions too; an image caption is a statement
    cjk = "小明: 我昨天去了陶艺课。你呢？"
    assert vector_text("小明", cjk) == f"{cjk}\n我昨天去了陶艺课。"
    arabic = "Layla: ذهبت إلى السوق. هل ذهبت؟"
    assert vector_text("Layla", arabic).endswith("\nذهبت إلى السوق.")
    caption = "Mel: Look at this! [image: a photo of a bowl]"
    assert vector_text("Mel", caption) == f"{caption}\nLook at this! [image: a photo of a bowl]"


def test_the_vector_weight_must_be_positive() -> None:
    with pytest.raises(InvalidInput):
        SearchOptions(vector_weight=0)


KNOBS = ("rrf_k", "vector_weight", "speaker_boost", "date_boost", "neighbour_lift",
         "speaker_vector_weight", "expansion_min_similarity", "agreement_full_at",
         "agreement_floor")  # fmt: skip


@pytest.mark.parametrize("knob", KNOBS)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_every_numeric_knob_refuses_what_is_not_a_finite_number(knob: str, value: float) -> None:
    """NaN compares false with everything, so a "must be positive" check written as ``<= 0``
    let it through, and one NaN weight makes every fused score it touches NaN."""
    bad: dict[str, Any] = {knob: value}
    with pytest.raises(InvalidInput):
        SearchOptions(**bad)
    SearchOptions(**{**bad, knob: 1.0})  # the same knob at a finite value is fine


@given(st.text(max_size=200))
def test_stored_counts_are_the_full_text_index_own_tokens(text: str) -> None:
    """A row's stored counts hold exactly the tokens FTS5 indexes for its text, whatever the
    script, case, punctuation or emoji (read back from an FTS5 table with the index's tokenizer
    through its vocabulary), and its length is the text's whitespace word count."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (text,))
    indexed = Counter(term for (term,) in db.execute("SELECT term FROM v"))
    counted = column_terms(text)
    stored = stored_tokens(counted.counts)
    assert stored == indexed
    assert counted.words == len(text.split())
