"""Consent in Russian, Polish, Turkish, Chinese, Japanese and Korean, on real SQLite: an explicit
request saves the user's clause, a forget request deletes it, and look-alikes (reported speech,
questions, advice to the other person, reminiscence) save nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import convmem

HELD_OUT = Path(__file__).resolve().parents[1] / "data" / "consent_languages_b.jsonl"


def memory_rows(scope: convmem.Scope) -> list[tuple[str, str]]:
    return [(m.text, m.status) for m in scope.memories.list(status=None, include_expired=True)]


@pytest.mark.parametrize(
    ("message", "saved"),
    [
        ("Запомни, что я люблю чай.", "я люблю чай."),
        ("Пожалуйста, запомни: мой сын учится в Казани.", "мой сын учится в Казани."),
        ("Не забудь, что я не ем мясо.", "я не ем мясо."),
        ("Pamiętaj, że lubię herbatę.", "lubię herbatę."),
        ("Zapamiętaj, że mieszkam w Krakowie.", "mieszkam w Krakowie."),
        ("Unutma, çay severim.", "çay severim."),
        ("Hatırla: İzmir'de yaşıyorum.", "İzmir'de yaşıyorum."),
        ("请记住我喜欢喝茶。", "我喜欢喝茶。"),
        ("记住：我住在杭州。", "我住在杭州。"),
        ("覚えておいて、私は紅茶が好きです。", "私は紅茶が好きです。"),
        ("私は大阪に住んでいると覚えておいてください。", "私は大阪に住んでいる。"),
        ("기억해 줘, 나는 차를 좋아해.", "나는 차를 좋아해."),
        ("내 고향은 부산이라는 걸 기억해 줘.", "내 고향은 부산이라."),
    ],
)
def test_a_request_in_another_script_saves_the_clause(
    alice: convmem.Scope, message: str, saved: str
) -> None:
    notices = alice.create_conversation().append("user", message).notices
    assert [(n.status, n.text) for n in notices] == [("saved", saved)]
    assert [m.text for m in alice.memories.list(status="confirmed")] == [saved]


@pytest.mark.parametrize(
    ("request_", "forget"),
    [
        ("Запомни, что я люблю чай.", "Забудь, что я люблю чай."),
        ("Pamiętaj, że mieszkam w Krakowie.", "Zapomnij, że mieszkam w Krakowie."),
        ("Unutma, çay severim.", "Unut: çay severim."),
        ("请记住我喜欢喝茶。", "忘掉我喜欢喝茶。"),
        ("覚えておいて、私は紅茶が好きです。", "私は紅茶が好きだということを忘れて。"),
        ("기억해 줘, 나는 차를 좋아해.", "잊어 줘, 나는 차를 좋아해."),
    ],
)
def test_a_forget_request_deletes_what_was_saved(
    alice: convmem.Scope, request_: str, forget: str
) -> None:
    conv = alice.create_conversation()
    assert [n.status for n in conv.append("user", request_).notices] == ["saved"]
    conv.append("user", forget)
    assert alice.memories.list(status="confirmed") == []


@pytest.mark.parametrize(
    ("request_", "forget"),
    [
        ("请记住我的猫叫咪咪。", "忘掉我的猫。"),
        ("覚えておいて、私の猫はタマです。", "私の猫を忘れて。"),
        ("기억해 줘, 내 고양이 이름은 나비야.", "내 고양이를 잊어 줘."),
    ],
)
def test_forgetting_a_noun_of_mine_deletes_the_memory_naming_it(
    alice: convmem.Scope, request_: str, forget: str
) -> None:
    conv = alice.create_conversation()
    assert [n.status for n in conv.append("user", request_).notices] == ["saved"]
    conv.append("user", forget)
    assert alice.memories.list(status="confirmed") == []


def test_a_forget_request_spares_another_memory(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", "请记住我喜欢喝咖啡。")
    conv.append("user", "忘掉我喜欢喝茶。")
    assert [m.text for m in alice.memories.list(status="confirmed")] == ["我喜欢喝咖啡。"]


@pytest.mark.parametrize(
    "message",
    [
        "Он сказал: запомни, что я люблю чай.",
        "Ты помнишь, что я люблю чай?",
        "Запомни, что ты молодец.",
        "Помнишь, как мы ездили на море?",
        "Powiedziała mi: pamiętaj, że jestem silna.",
        "Pamiętasz, że lubię herbatę?",
        "Pamiętaj, że nie jesteś sam.",
        "Unutma, sen harikasın.",
        "Hatırlıyor musun, çay severim?",
        "Unutma, yarın sinemaya gideceğim.",
        "Unutma, resim.",
        "Забудь об этом.",
        "Zapomnij o tym.",
        "他说记住我喜欢喝茶。",
        "你还记得我喜欢喝茶吗？",
        "记住你很棒。",
        "覚えてる？私は紅茶が好きだった。",
        "覚えておいて、あなたは一人じゃない。",
        "기억해 줘, 너는 혼자가 아니야.",
        "그는 기억해 줘라고 말했다.",
    ],
)
def test_look_alikes_in_another_script_save_nothing(alice: convmem.Scope, message: str) -> None:
    notices = alice.create_conversation().append("user", message).notices
    assert all(n.status != "saved" for n in notices)
    assert [row for row in memory_rows(alice) if row[1] == "confirmed"] == []


@pytest.mark.parametrize(
    "message", ["Запомни: мой пароль — Starling42!", "请记住我的密码是 hunter2pass"]
)
def test_a_secret_asked_to_be_remembered_is_refused(alice: convmem.Scope, message: str) -> None:
    notices = alice.create_conversation().append("user", message).notices
    assert [n.status for n in notices] == ["blocked"]
    assert memory_rows(alice) == []


def _held_out() -> list[dict[str, str]]:
    return [json.loads(line) for line in HELD_OUT.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("case", _held_out(), ids=lambda c: c["text"][:24])
def test_held_out_lines(alice: convmem.Scope, case: dict[str, str]) -> None:
    """Split B: written before the grammar was built, run only once it was."""
    notices = alice.create_conversation().append("user", case["text"]).notices
    statuses = [n.status for n in notices]
    if case["label"] == "save":
        assert statuses == ["saved"]
    else:
        assert "saved" not in statuses
