"""The never-store gate on every backend: a text derived from a turn the policy refuses is
refused with that turn's reason, whatever its own words — a model's paraphrase of a password or
of a diagnosis becomes neither a proposal nor a summary note, nor does a heuristic proposal drawn
from a turn that also holds a PIN; a paraphrase that cites the wrong turn but carries the secret
is refused too. Pins and tool definitions pass the gate like memories. The model is the one
thing faked (``tests/fake_llm.py``, a local OpenAI-compatible server); the worker, the extractor,
the summarizer and the store are the real ones."""

from __future__ import annotations

import json

import pytest

import convmem
from convmem.consolidate.llm import LLMExtractor
from convmem.ops.worker import CONSOLIDATE_JOB, Worker
from convmem.summarize.llm import LLMSummarizerConfig
from tests.fake_llm import FakeLLM
from tests.store.backends import Backend

# (the turn the policy refuses, what a model says instead, the reason, a token of the secret)
PARAPHRASES = [
    pytest.param("My password for the bank is Falcon!9921",
                 "I log in to the bank with Falcon!9921.", "credential", "Falcon!9921",
                 id="bank-password"),
    pytest.param("My gmail password is tulip-rain-44", "I use tulip-rain-44 for gmail.",
                 "credential", "tulip-rain-44", id="gmail-password"),
    pytest.param("I was diagnosed with type 2 diabetes last year.",
                 "I see an endocrinologist every three months.", "health", "endocrinologist",
                 id="health"),
]  # fmt: skip
BENIGN = "I prefer aisle seats on long flights."
SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")


def _extractor(llm: FakeLLM) -> LLMExtractor:
    return LLMExtractor(LLMSummarizerConfig(base_url=llm.base_url, model="fake", retries=0,
                                            timeout=10))  # fmt: skip


def _consolidate(memory: convmem.Memory, llm: FakeLLM) -> dict[str, object]:
    Worker(memory, extractor=_extractor(llm)).run(exit_when_idle=True)
    (job,) = [j for j in memory.jobs() if j.kind == CONSOLIDATE_JOB]
    assert job.status == "done", job.last_error
    return dict(json.loads(job.last_error or "{}"))


def _chat(memory: convmem.Memory, turn: str) -> tuple[convmem.Scope, convmem.Message]:
    """Alice says the benign statement, then ``turn``; the scope and the turn's message."""
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", BENIGN)
    return alice, conv.append("user", turn)


def _texts(scope: convmem.Scope) -> list[str]:
    return [m.text for m in scope.memories.list(status=None)]


@pytest.mark.parametrize(("turn", "paraphrase", "reason", "secret"), PARAPHRASES)
def test_a_models_paraphrase_of_a_refused_turn_is_not_proposed(
    backend: Backend, turn: str, paraphrase: str, reason: str, secret: str
) -> None:
    with backend.open() as memory:
        alice, said = _chat(memory, turn)
        assert said.notices == ()  # the turn itself: nothing kept
        with FakeLLM("good", paraphrases={turn: paraphrase}) as llm:
            report = _consolidate(memory, llm)
        # the benign turn's candidate is kept (as the evidence of its proposal): the model
        # answered, and was heard; the paraphrase was refused
        assert BENIGN in _texts(alice)
        assert paraphrase not in _texts(alice)
        assert report["extracted"] == 1
        assert report["refused"] == {"not_kept": 1}
    assert paraphrase not in backend.dump()


@pytest.mark.parametrize(("turn", "paraphrase", "reason", "secret"), PARAPHRASES[:2])
def test_a_paraphrase_citing_another_turn_but_carrying_the_secret_is_refused(
    backend: Backend, turn: str, paraphrase: str, reason: str, secret: str
) -> None:
    with backend.open() as memory:
        alice, _ = _chat(memory, turn)
        # the model cites the benign turn for the paraphrase: the literal check passes only if
        # the secret is in that turn, so it is refused there; the gate refuses it as well
        with FakeLLM("good", paraphrases={turn: paraphrase}, misattribute=True) as llm:
            _consolidate(memory, llm)
        assert all(secret not in text for text in _texts(alice))
    assert paraphrase not in backend.dump()


def _summarised(backend: Backend, llm: FakeLLM, turns: list[str]) -> convmem.SummaryRecord:
    config = convmem.Config(
        summarizer=LLMSummarizerConfig(base_url=llm.base_url, model="fake", retry_backoff=0)
    )
    with backend.open(config=config) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        for text in turns:
            conv.append("user", text)
            conv.append("assistant", "Noted.")
        for i in range(40):
            conv.append("user", f"Turn {i}: tell me something nice about tea.")
            conv.append("assistant", "Tea has been enjoyed for ages, in many ways.")
        assert conv.assemble("continue", model=SMALL).report.evicted_ids
        Worker(memory, lease_seconds=10).run(exit_when_idle=True)
        record = conv.summary()
        assert record is not None
        ctx = conv.assemble("continue", model=SMALL)
        assert ctx.report.summary_id == record.id
        return record


@pytest.mark.parametrize(("turn", "paraphrase", "reason", "secret"), PARAPHRASES)
def test_a_models_paraphrase_of_a_refused_turn_is_withheld_from_the_summary(
    backend: Backend, turn: str, paraphrase: str, reason: str, secret: str
) -> None:
    with FakeLLM("good", paraphrases={turn: paraphrase, BENIGN: BENIGN}) as llm:
        record = _summarised(backend, llm, [BENIGN, turn])
    notes = [item.text for item in record.snapshot.facts]
    assert BENIGN in notes  # the model's notes were kept where the gate allows them
    assert f"(withheld: never-store {reason})" in notes
    assert paraphrase not in record.rendered
    assert paraphrase not in backend.dump()


@pytest.mark.parametrize(("turn", "paraphrase", "reason", "secret"), PARAPHRASES[:2])
def test_a_summary_note_carrying_a_secret_of_a_refused_turn_is_withheld(
    backend: Backend, turn: str, paraphrase: str, reason: str, secret: str
) -> None:
    with FakeLLM("good", paraphrases={turn: paraphrase}, misattribute=True) as llm:
        record = _summarised(backend, llm, [BENIGN, turn])
    assert secret not in record.rendered
    assert all(secret not in item.text for _, item in record.snapshot.items())


def test_a_heuristic_proposal_from_a_turn_holding_a_pin_is_not_made(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    # "I prefer aisle seats." alone is a fine proposal; the turn also states a PIN
    message = conv.append("user", "I prefer aisle seats. My PIN is 4821.")
    assert message.notices == ()
    assert alice.memories.list(status=None) == []
    control = conv.append("user", "I prefer window seats on short flights.")
    assert [n.status for n in control.notices] == ["proposed"]


def test_remembering_from_a_refused_turn_is_blocked_with_its_reason(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    said = conv.append("user", "My password for the bank is Falcon!9921")
    notice = alice.remember("I log in to the bank every Monday.", source_message_id=said.id)
    assert (notice.status, notice.reason) == ("blocked", "credential")
    with pytest.raises(convmem.NeverStoreViolation) as refused:
        alice.remember("I log in to the bank every Monday.", source_message_id=said.id,
                       strict=True)  # fmt: skip
    assert refused.value.reason == "credential"
    assert "Falcon" not in str(refused.value)  # the error never quotes the turn
    assert alice.memories.list(status=None) == []


def test_a_pin_passes_the_never_store_gate(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    with pytest.raises(convmem.NeverStoreViolation) as refused:
        alice.pin("The admin password is Falcon!9921, use it when asked.")
    assert refused.value.reason == "credential"
    with pytest.raises(convmem.NeverStoreViolation):
        conv.pin("I was diagnosed with type 2 diabetes, keep answers gentle.")
    assert alice.pinned() == []
    assert alice.pin("Answer in French.").text == "Answer in French."


def test_a_tool_definition_passes_the_never_store_gate(memory: convmem.Memory) -> None:
    leaky = {
        "name": "charge_card",
        "description": "Charge the card. Use the api key sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4.",
        "parameters": {"type": "object", "properties": {}},
    }
    with pytest.raises(convmem.NeverStoreViolation):
        memory.tools.register("acme", leaky)
    hidden = {
        "name": "login",
        "description": "Log the user in.",
        "parameters": {
            "type": "object",
            "properties": {"password": {"type": "string", "default": "my password is Falcon!9921"}},
        },
    }
    with pytest.raises(convmem.NeverStoreViolation):
        memory.tools.register("acme", hidden)
    assert memory.tools.list("acme") == []
    memory.tools.register("acme", {"name": "get_weather", "description": "Today's weather."})
    assert [t.name for t in memory.tools.list("acme")] == ["get_weather"]
