"""Candidate memories from a model (a local OpenAI-compatible server, ``tests/fake_llm.py``),
through the real worker: only proposals, each citing the user turns it came from, each passing
the never-store policy, with numbers and names required to occur in the cited turns. A model
that invents a number or a name, cites a turn that is not the user's, or answers garbage makes
nothing; small talk and questions make nothing; nothing is ever confirmed without the user."""

from __future__ import annotations

import json

import pytest

import convmem
from convmem.consolidate.llm import LLMExtractor
from convmem.ops.worker import CONSOLIDATE_JOB, Worker
from convmem.summarize.llm import LLMSummarizerConfig
from tests.fake_llm import FakeLLM

CARD = "My card number is 4111 1111 1111 1111."


def _extractor(llm: FakeLLM) -> LLMExtractor:
    return LLMExtractor(LLMSummarizerConfig(base_url=llm.base_url, model="fake", retries=0,
                                            timeout=10))  # fmt: skip


def _chat(scope: convmem.Scope) -> dict[str, str]:
    conv = scope.create_conversation()
    ids = {}
    for text in (
        "Remember when we went to Porto?",
        "We fly out on Friday, by the way.",
        "Do you think it will rain?",
        CARD,
        "My sister Ana Lopez lives in Lisbon.",
    ):
        ids[text] = conv.append("user", text).id
        conv.append("assistant", f"Noted: {text[:10]} Beatrix 1999.")
    temp = scope.create_conversation(temporary=True)
    ids["temporary"] = temp.append("user", "We always take the night train.").id
    return ids


def _run(memory: convmem.Memory, llm: FakeLLM) -> dict[str, object]:
    worker = Worker(memory, extractor=_extractor(llm))
    worker.run(exit_when_idle=True)
    (job,) = [j for j in memory.jobs() if j.kind == CONSOLIDATE_JOB]
    assert job.status == "done", job.last_error
    return dict(json.loads(job.last_error or "{}"))


def _no_confirmation_without_the_user(scope: convmem.Scope) -> None:
    assert scope.memories.list(status="confirmed") == []
    assert not [e for e in scope.audit() if e.action in ("memory.saved", "memory.confirmed")]


def test_checked_candidates_become_proposals_citing_their_turns(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    ids = _chat(alice)
    with FakeLLM("good") as llm:
        report = _run(memory, llm)
    proposals = alice.memories.list(status="proposed")
    texts = {p.text: alice.memories.evidence(p.id) for p in proposals}
    assert texts == {
        "We fly out on Friday, by the way.": [ids["We fly out on Friday, by the way."]],
        "My sister Ana Lopez lives in Lisbon.": [ids["My sister Ana Lopez lives in Lisbon."]],
    }
    assert report["extracted"] == 2
    # the question and the recollection are small talk; the card number is never stored
    assert report["refused"] == {"small_talk": 2, "not_kept": 1}
    assert all("4111" not in p.text for p in alice.memories.list(status=None))
    sent = json.loads(llm.requests[0]["messages"][-1]["content"])
    assert ids["temporary"] not in {t["id"] for t in sent["turns"]}  # temporary: never read
    _no_confirmation_without_the_user(alice)
    # confirming is the user's act, and only then is it recalled
    (sister,) = [p for p in proposals if "Ana" in p.text]
    assert alice.memories.confirm(sister.id).status == "confirmed"


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("invented_number", "number_not_in_sources"), ("invented_name", "name_not_in_sources"),
     ("wrong_source", "cites_no_user_turn")],
)  # fmt: skip
def test_a_model_that_invents_makes_nothing_of_it(
    memory: convmem.Memory, mode: str, reason: str
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I prefer aisle seats.")
    conv.append("assistant", "Aisle seats it is, Beatrix, since 2011.")
    with FakeLLM(mode) as llm:
        report = _run(memory, llm)
    assert report["refused"] == {reason: 1}
    # the grammar's own suggestion, made as the user spoke, is the only proposal
    (only,) = alice.memories.list(status=None)
    assert only.text == "I prefer aisle seats." and only.status == "proposed"
    _no_confirmation_without_the_user(alice)


def test_garbage_from_the_model_makes_nothing(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "We fly out on Friday.")
    with FakeLLM("garbage") as llm:
        report = _run(memory, llm)
    assert str(report["extractor"]).startswith("invalid output: not JSON")
    assert alice.memories.list(status=None) == []


def test_a_model_down_fails_nothing_and_makes_nothing(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "We fly out on Friday.")
    with FakeLLM("error") as llm:
        report = _run(memory, llm)
    assert str(report["extractor"]).startswith("http 500")
    assert alice.memories.list(status=None) == []


def test_no_background_path_makes_a_memory_the_user_did_not_confirm(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    said = alice.create_conversation().append("user", "Remember that I drink green tea.")
    for text in (
        "I prefer aisle seats.",
        "I prefer aisle seats on trains.",
        "Remember that I prefer aisle seats.",
        "I am vegetarian.",
        "I am a vegetarian!",
    ):
        alice.create_conversation().append("user", text)
    with FakeLLM("good") as llm:
        worker = Worker(memory, extractor=_extractor(llm))
        worker.run(exit_when_idle=True)
        worker.queue_consolidation()
        worker.run(exit_when_idle=True)
    # the confirmed memories are exactly the ones the user asked for, in their own turns
    confirmed = alice.memories.list(status="confirmed")
    assert {m.source_message_id for m in confirmed} <= {
        said.id, *[e for m in confirmed for e in alice.memories.evidence(m.id)]
    }  # fmt: skip
    assert {m.source_kind for m in confirmed} == {"user_explicit"}
    saved_by = {e.actor for e in alice.audit() if e.action in ("memory.saved", "memory.confirmed")}
    assert saved_by == {"user:alice"}
    background = {e.actor for e in alice.audit()} - {"user:alice"}
    assert background <= {"consolidation"}
    assert {e.action for e in alice.audit() if e.actor == "consolidation"} <= {
        "memory.proposed", "memory.proposal_merged", "memory.proposal_expired",
    }  # fmt: skip
