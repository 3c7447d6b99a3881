"""``index_form`` / ``query_form``: scripts without spaces between words as overlapping
character pairs (and, in the index, single characters), every other script untouched, and query
terms read as pairs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from convmem.retrieval.lexical import query_terms, words
from convmem.store.index_form import index_form, needs_index_form, query_form


def test_runs_become_overlapping_pairs_and_a_single_character_stays() -> None:
    assert query_form("学陶艺").split() == ["学陶", "陶艺"]
    assert query_form("猫").split() == ["猫"]
    assert query_form("陶艺").split() == ["陶艺"]
    # the index holds the characters too, so a one-character query word finds them
    assert sorted(index_form("学陶艺").split()) == sorted(["学", "陶", "艺", "学陶", "陶艺"])
    assert set(query_form("我家的猫").split()) | {"猫"} <= set(index_form("我家的猫").split())
    # punctuation of those scripts separates runs; Latin beside them is split off
    assert query_form("我学陶艺。你呢？").split() == ["我学", "学陶", "陶艺", "。", "你呢", "？"]
    assert words("abc陶艺def") == ["abc", "陶艺", "def"]
    # Japanese kana and kanji form one run; Korean particles attach to the run
    assert words("陶芸を始めた") == ["陶芸", "芸を", "を始", "始め", "めた"]
    assert words("도예를") == ["도예", "예를"]


def test_combining_marks_are_left_out_before_pairing() -> None:
    # Thai vowel and tone marks (Mn) would split the run at each mark in the tokenizers
    assert words("ปั้น") == ["ปน"]
    # Khmer's coeng and vowel signs likewise
    assert words("ស្មូន") == ["សម", "មន"]


@given(st.text(alphabet=st.characters(max_codepoint=0x0DFF), max_size=80))
def test_text_without_those_scripts_is_unchanged(text: str) -> None:
    # Latin, Greek, Cyrillic, Hebrew, Arabic, Devanagari and the other Indic scripts below Thai
    assert not needs_index_form(text)
    assert index_form(text) == text and query_form(text) == text


@given(st.text(max_size=60))
def test_the_query_form_of_a_query_form_splits_into_the_same_words(text: str) -> None:
    once = query_form(text)
    assert words(once) == words(text)
    assert query_form(once).split() == once.split()
    # and every query word is a token of the index (whose runs are pairs or single characters,
    # which words() splits as they are)
    assert set(words(text)) <= set(words(index_form(text)))


def test_query_terms_keep_single_ideographs_but_not_single_letters() -> None:
    assert query_terms("猫 and a dog") == ["猫", "dog"]
    assert query_terms("我什么时候开始学陶艺的？")[:3] == ["我什", "什么", "么时"]
    assert "陶艺" in query_terms("我什么时候开始学陶艺的？")
