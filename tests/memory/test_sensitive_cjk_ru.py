"""Health, orientation, religion and party membership disclosed in Chinese, Japanese, Korean and
Russian are never stored (found probing: "我有糖尿病", "私は糖尿病です", "저는 당뇨병이 있어요",
"У меня диабет", "我是同性恋" were saved); the topic without a disclosure is. Through the policy
and through ``remember`` on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

import convmem
from convmem.memory.policy import BlockReason, check_text

HEALTH = [
    "我有糖尿病。",
    "我得了乳腺癌。",
    "我妈妈患有阿尔茨海默症。",
    "我被诊断出抑郁症",
    "我怀孕了",
    "我对花生过敏。",
    "我一直有轻度焦虑症",
    "我媽媽得了癌症",
    "私は糖尿病です。",
    "母はがんを患っています",
    "私はうつ病と診断されました",
    "私は妊娠しています",
    "僕はピーナッツアレルギーがあります",
    "저는 당뇨병이 있어요.",
    "제가 우울증 진단을 받았어요",
    "우리 엄마는 암에 걸렸어요",
    "저는 임신했어요",
    "저는 땅콩 알레르기가 있어요",
    "У меня диабет.",
    "у меня рак",
    "Моя мама болеет диабетом",
    "я беременна",
    "У меня аллергия на орехи",
    "Мне поставили диагноз",
    "У меня сахарный диабет",
]
SENSITIVE = [
    "我是同性恋。",
    "我是穆斯林。",
    "我信仰佛教",
    "私はゲイです",
    "私はムスリムです",
    "저는 동성애자예요",
    "저는 기독교인이에요",
    "Я гей",
    "я мусульманин",
    "Я православный",
    "Я член партии",
]
TOPICS = [
    "我在癌症研究所工作。",
    "糖尿病是一种常见病。",
    "我的猫有糖尿病吗？",
    "我朋友得了癌症",
    "我想了解抑郁症",
    "他是穆斯林吗",
    "我是医生",
    "我对这个过程很满意",
    "我是学生",
    "我有一只猫",
    "我对自己很满意",
    "私は糖尿病の研究をしています",
    "がんについて調べています",
    "私は学生です",
    "저는 당뇨병 연구를 해요",
    "암에 대한 책을 읽었어요",
    "저는 학생이에요",
    "Я изучаю диабет.",
    "Рак — это болезнь",
    "я врач",
    "я работаю в больнице",
    "я программист",
    "у меня есть кот",
    "Я читал про рак",
]


@pytest.mark.parametrize("text", HEALTH)
def test_a_health_disclosure_is_refused(text: str) -> None:
    assert check_text(text).reason == BlockReason.HEALTH


@pytest.mark.parametrize("text", SENSITIVE)
def test_a_sensitive_category_disclosure_is_refused(text: str) -> None:
    assert check_text(text).reason == BlockReason.SENSITIVE_CATEGORY


@pytest.mark.parametrize("text", TOPICS)
def test_the_topic_without_a_disclosure_passes(text: str) -> None:
    assert check_text(text).allowed


def test_remember_refuses_them_and_writes_nothing(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "m.db") as memory:
        alice = memory.scope("acme", "alice")
        for text in ("我有糖尿病。", "私はゲイです", "У меня диабет."):
            assert alice.remember(text).status == "blocked"
        assert alice.memories.list() == []
        assert alice.remember("我在癌症研究所工作。").memory is not None
