"""Credentials stated in words in Chinese, Japanese, Korean, Russian, Ukrainian, Arabic, Hindi,
Turkish and Polish are never stored; talking about a password in those languages is. Through the
policy and through ``remember`` on a real SQLite file (a refusal writes nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

import convmem
from convmem.memory.policy import BlockReason, check_text

GIVEN = [
    "我的密码是hunter2x9",
    "我的密码是 hunter2x9",
    "密码：abc12345",
    "WiFi密碼是 Sunflower99",
    "门禁码是 4821",
    "银行卡PIN码是1234",
    "パスワードはabc123です",
    "私のパスワードは「hunter2x9」です",
    "暗証番号は4821です",
    "비밀번호는 abc123이에요",
    "제 비밀번호: qwerty123",
    "비번 hunter22",
    "Мой пароль: hunter2",
    "пароль от почты qwerty123",
    "пин-код 4821",
    "код от домофона 4821",
    "Код от домофона 4821",  # a capital Cyrillic Ka arrives as the Latin K after normalising
    "мой пароль — «сезам»",
    "Мій пароль: qwerty123",
    "كلمة المرور هي abc123",
    "الرقم السري 4821",
    "मेरा पासवर्ड abc123 है",
    "पासवर्ड है Sunflower99",
    "şifrem abc123",
    "şifre: Sunflower99",
    "moje hasło to qwerty123",
    "hasło: abc123",
    "kod pin 4821",
]
TALKED_ABOUT = [
    "我忘记密码了。",
    "密码是错的。",
    "请帮我重置密码。",
    "パスワードを変更しました。",
    "パスワードが長すぎる",
    "비밀번호를 잊어버렸어요.",
    "비밀번호가 너무 짧아요",
    "пароль слишком короткий",
    "Я забыл пароль от почты.",
    "Пароль нужно менять каждый месяц.",
    "код ошибки 404",
    "код от домофона я не помню",
    "كلمة المرور قديمة",
    "मैं अपना पासवर्ड भूल गया",
    "şifremi unuttum",
    "zapomniałem hasła",
    "hasło jest za krótkie",
    "我在密西西比州住过",
    "验证码发到我手机了",
]


@pytest.mark.parametrize("text", GIVEN)
def test_a_password_or_code_given_in_words_is_refused(text: str) -> None:
    decision = check_text(text)
    assert not decision.allowed
    assert decision.reason == BlockReason.CREDENTIAL


@pytest.mark.parametrize("text", TALKED_ABOUT)
def test_talking_about_a_password_is_not_a_credential(text: str) -> None:
    assert check_text(text).reason != BlockReason.CREDENTIAL


def test_remember_refuses_them_and_writes_nothing(tmp_path: Path) -> None:
    with convmem.open(tmp_path / "m.db") as memory:
        alice = memory.scope("acme", "alice")
        for text in ("我的密码是hunter2x9", "Мой пароль: hunter2", "비밀번호는 abc123이에요"):
            notice = alice.remember(text)
            assert (notice.status, notice.reason, notice.memory) == ("blocked", "credential", None)
        assert alice.memories.list() == []
        kept = alice.remember("我忘记密码了，需要重置。").memory
        assert kept is not None and [m.id for m in alice.memories.list()] == [kept.id]
