"""Full-text search in scripts written without spaces between words, on every backend.

Chinese and Japanese put no space between words, Thai none between the words of a phrase, and
Korean joins particles to the word before them, so a word-splitting index took a whole phrase
for one token and a search for a word inside it found nothing. The indexes hold such runs as
overlapping character pairs and read queries the same way (``convmem.store.index_form``); these
tests search for a word in the middle of a run, through the public API, with no embedder (the
lexical path alone), for turns, memories and tools, after an edit and a delete too.
"""

from __future__ import annotations

import pytest

from convmem.testing.harness import Backend

# (a turn holding the word, another turn in the same language, the word — inside a run of the
# first —, and a word that shares no pair of characters with either turn). A query word is read
# as its character pairs, OR-ed like the words of any query: a word sharing a pair with a turn
# finds it, ranked by how much it shares, as a stem shared finds an English turn.
TURNS = [
    ("我上个月开始学陶艺，每周二上课。", "今天天气很好，我们去公园吧。", "陶艺", "游泳"),
    ("私は先月から陶芸教室に通っています。", "今日はとても暑いです。", "陶芸", "水泳"),
    ("저는 지난달에 도예를 시작했어요.", "어제 친구와 영화를 봤어요.", "도예", "수영"),
    ("ฉันเริ่มเรียนปั้นดินเผาเมื่อเดือนที่แล้ว", "วันนี้อากาศร้อนมาก", "ปั้นดินเผา", "หนังสือ"),
    ("ខ្ញុំចូលចិត្តធ្វើស្មូនណាស់", "ថ្ងៃនេះក្តៅណាស់", "ស្មូន", "សៀវភៅ"),
]
ENGLISH = ["We drove up to the lake on Saturday.", "The weather was grey all week."]


@pytest.mark.parametrize(
    ("text", "other", "word", "absent"), TURNS, ids=["zh", "ja", "ko", "th", "km"]
)
def test_a_word_inside_a_run_finds_its_turn(
    backend: Backend, text: str, other: str, word: str, absent: str
) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        ids = [conv.append("user", t).id for t in [ENGLISH[0], text, ENGLISH[1], other]]
        assert [hit.message.id for hit in conv.search(word, k=5)][:1] == [ids[1]]
        # a question holding the word finds it too
        assert [hit.message.id for hit in conv.search(f"{word}?", k=5)][:1] == [ids[1]]
        assert conv.search(absent, k=5) == []
        # another user's search reaches nothing of it
        bob = memory.scope("acme", "bob").create_conversation()
        bob.append("user", other)
        assert bob.search(word, k=5) == []


def test_english_is_searched_as_before_beside_those_scripts(backend: Backend) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        mixed = conv.append("user", "My pottery class（陶艺课）starts on Tuesday.")
        plain = conv.append("user", "Pottery is relaxing.")
        assert {h.message.id for h in conv.search("pottery", k=5)} == {mixed.id, plain.id}
        # (the other turn may follow, by its neighbour's words)
        assert [h.message.id for h in conv.search("陶艺", k=5)][:1] == [mixed.id]
        assert [h.message.id for h in conv.search("tuesday", k=5)][:1] == [mixed.id]


def test_an_edited_or_deleted_turn_leaves_its_words_behind(backend: Backend) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        first = conv.append("user", "我喜欢游泳和陶艺。")
        conv.append("assistant", "好的。")
        edited = conv.edit(first.id, "我喜欢跑步。")
        assert [h.message.id for h in conv.search("跑步", k=5)] == [edited.id]
        conv.delete_message(first.id)
        conv.delete_message(edited.id)
        assert conv.search("跑步", k=5) == []
        assert conv.search("陶艺", k=5) == []
        assert conv.search("游泳", k=5) == []


def test_memories_are_found_by_a_word_inside_a_run(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        kept = alice.remember("我每天早上喝乌龙茶。").memory
        alice.remember("I like hiking.")
        assert kept is not None
        assert [h.memory.id for h in alice.search_memories("乌龙", k=5)] == [kept.id]
        assert alice.search_memories("游泳", k=5) == []
        assert memory.scope("acme", "bob").search_memories("乌龙", k=5) == []


def test_tools_are_found_by_a_word_inside_a_run(backend: Backend) -> None:
    tool = {
        "name": "track_parcel",
        "description": "荷物の配達状況を調べる。",
        "input_schema": {"type": "object", "properties": {"number": {"type": "string"}}},
    }
    with backend.open() as memory:
        memory.tools.register("acme", tool, use_when=["荷物はどこですか"])
        with memory.store.read() as tx:
            hits = tx.search_tool_terms("acme", ["配達"], limit=5)
            assert [h.name for h in hits] == ["track_parcel"]
            assert tx.search_tool_terms("acme", ["料金"], limit=5) == []


@pytest.mark.parametrize(
    ("text", "word"),
    [("我家的猫很可爱。", "猫"), ("我有一只猫", "猫"), ("昨日、本を読んだ。", "本")],
    ids=["inside", "last", "ja"],
)
def test_a_one_character_word_finds_the_turns_that_hold_it(
    backend: Backend, text: str, word: str
) -> None:
    with backend.open() as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        ids = [conv.append("user", t).id for t in [ENGLISH[0], text, ENGLISH[1]]]
        assert [hit.message.id for hit in conv.search(word, k=5)][:1] == [ids[1]]
        assert conv.search("狗", k=5) == []
