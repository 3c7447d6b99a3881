"""``index_form``: scripts without spaces between words as overlapping character pairs, every
other script untouched, and query terms read the same way."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from convmem.retrieval.lexical import query_terms, words
from convmem.store.index_form import index_form, needs_index_form


def test_runs_become_overlapping_pairs_and_a_single_character_stays() -> None:
    assert index_form("学陶艺").split() == ["学陶", "陶艺"]
    assert index_form("猫").split() == ["猫"]
    assert index_form("陶艺").split() == ["陶艺"]
    # punctuation of those scripts separates runs; Latin beside them is split off
    assert index_form("我学陶艺。你呢？").split() == ["我学", "学陶", "陶艺", "。", "你呢", "？"]
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
    assert index_form(text) == text


@given(st.text(max_size=60))
def test_the_index_form_of_an_index_form_splits_into_the_same_words(text: str) -> None:
    once = index_form(text)
    assert words(once) == words(text)
    assert index_form(once).split() == once.split()


def test_query_terms_keep_single_ideographs_but_not_single_letters() -> None:
    assert query_terms("猫 and a dog") == ["猫", "dog"]
    assert query_terms("我什么时候开始学陶艺的？")[:3] == ["我什", "什么", "么时"]
    assert "陶艺" in query_terms("我什么时候开始学陶艺的？")
