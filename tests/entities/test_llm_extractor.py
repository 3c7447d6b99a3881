"""The optional LLM entity extractor against a local OpenAI-compatible server
(``tests/fake_llm.py``): its names and facts are checked against the turn, pass the never-store
policy, and any failure — HTTP error, timeout, garbage, invented entities — falls back to the
deterministic extractor, so a rebuild never loses entities to a model outage."""

from __future__ import annotations

from pathlib import Path

import pytest

import convmem
from convmem.entities.extract import EXTRACTOR
from convmem.entities.llm import LLMEntityExtractor
from convmem.summarize.llm import LLMSummarizerConfig
from tests.fake_llm import FakeLLM


def _extractor(fake: FakeLLM, timeout: float = 5.0) -> LLMEntityExtractor:
    return LLMEntityExtractor(
        LLMSummarizerConfig(base_url=fake.base_url, model="fake", timeout=timeout, retries=1,
                            retry_backoff=0.0)
    )  # fmt: skip


@pytest.fixture
def alice(tmp_path: Path) -> convmem.Scope:
    memory = convmem.open(str(tmp_path / "c.db"), config=convmem.Config(entities=False))
    scope = memory.scope("acme", "alice")
    conv = scope.create_conversation()
    conv.append("user", "Yesterday my colleague Priyanka finished the audit.")
    conv.append("assistant", "Please thank Priyanka and Tomasz for me.")
    conv.append("user", "Note that Priyanka's card number is 4111 1111 1111 1111 for refunds.")
    return scope


def test_the_models_entities_are_stored_with_their_extractor(alice: convmem.Scope) -> None:
    assert alice.entities.list() == []  # derivation on write is off: only the rebuild reads
    with FakeLLM("good") as fake:
        extractor = _extractor(fake)
        stored = alice.entities.rebuild(extractor=extractor)
        assert extractor.last_fallback_reason is None
        assert len(fake.requests) == 3
    assert stored > 0
    (priyanka,) = alice.entities.search("Priyanka")
    facts = alice.entities.get(priyanka.id).facts
    assert {f.extractor for f in facts} == {"llm:fake"}
    assert {f.text for f in facts} == {
        "Yesterday my colleague Priyanka finished the audit.",
        "Please thank Priyanka and Tomasz for me.",
    }
    # the turn with a card number gave the model's answer nothing to store
    every = [f.text for e in alice.entities.list() for f in alice.entities.get(e.id).facts]
    assert all("4111" not in text for text in every)
    assert "Tomasz" in [e.name for e in alice.entities.list()]


@pytest.mark.parametrize("mode", ["error", "garbage", "invented"])
def test_a_failing_or_inventing_model_falls_back_to_the_deterministic_extractor(
    alice: convmem.Scope, mode: str
) -> None:
    with FakeLLM(mode) as fake:
        extractor = _extractor(fake)
        alice.entities.rebuild(extractor=extractor)
        assert extractor.last_fallback_reason is not None
        assert len(fake.requests) == 6  # one retry per turn
    names = [e.name for e in alice.entities.list()]
    assert "Zorblax" not in names and "Priyanka" in names
    (priyanka,) = alice.entities.search("Priyanka")
    assert {f.extractor for f in alice.entities.get(priyanka.id).facts} == {EXTRACTOR}


def test_a_model_that_hangs_times_out_and_falls_back(alice: convmem.Scope) -> None:
    with FakeLLM("hang") as fake:
        extractor = _extractor(fake, timeout=0.3)
        alice.entities.rebuild(extractor=extractor)
        assert extractor.last_fallback_reason is not None
        assert "timeout" in extractor.last_fallback_reason
    assert "Priyanka" in [e.name for e in alice.entities.list()]
