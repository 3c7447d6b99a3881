"""Summary faithfulness of ``convmem eval behaviour`` measured with a model: the compaction cases'
summaries come from a local OpenAI-compatible server (``tests.fake_llm``: a real HTTP server
speaking the chat-completions protocol), built by the jobs the suite's requests queue, and every
stored note is scored against the turns it cites."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.eval import behaviour
from convmem.summarize import LLMSummarizerConfig
from tests.fake_llm import FakeLLM

CASES = ("compaction-orders-kept", "compaction-billing-kept", "compaction-guess-cache")


def _cases() -> list[behaviour.Case]:
    return [case for case in behaviour.load() if case.id in CASES]


def _config(llm: FakeLLM) -> convmem.Config:
    return convmem.Config(
        summarizer=LLMSummarizerConfig(base_url=llm.base_url, model="fake", retry_backoff=0)
    )


def test_a_faithful_model_scores_full_marks_and_its_summaries_pass(db_path: Path) -> None:
    with FakeLLM("good") as llm, convmem.open(db_path, config=_config(llm)) as memory:
        result = behaviour.run_suite(behaviour.EngineDriver(memory), _cases())
        assert llm.requests  # the summaries were asked of the model, over HTTP
    faithfulness = result["faithfulness"]
    assert faithfulness["summarizer"] == "llm:fake"
    assert faithfulness["summaries"] >= len(CASES)
    assert faithfulness["fallback_summaries"] == 0
    assert faithfulness["notes"] >= 4 * 2 + 1
    assert faithfulness["literals_verbatim_share"] == 1.0
    assert faithfulness["supported_by_sources_share"] == 1.0
    assert result["failed"] == 0, result["kinds"]["compaction"]["failures"]


def test_a_model_that_invents_notes_scores_low_though_its_notes_are_not_stored(
    db_path: Path,
) -> None:
    """The model's notes cite numbers their sources do not hold, and a message that does not
    exist. The summarizer's verbatim check drops them before they are stored — and the suite
    measures faithfulness on what the model produced, before that check, so the forging model
    scores low (it scored 1.0 when only the kept notes were measured). The compaction cases
    fail, naming what the summary lost."""
    with FakeLLM("wrong_numbers") as llm, convmem.open(db_path, config=_config(llm)) as memory:
        result = behaviour.run_suite(behaviour.EngineDriver(memory), _cases())
        assert llm.requests
    faithfulness = result["faithfulness"]
    assert faithfulness["measured_on"] == "produced"
    assert faithfulness["summaries"] >= len(CASES)
    assert faithfulness["notes"] >= 2 * len(CASES)
    assert faithfulness["literals_verbatim_share"] == 0.0
    assert faithfulness["supported_by_sources_share"] == 0.0
    assert result["kinds"]["compaction"]["failed"] == len(CASES)
    problems = [p for f in result["kinds"]["compaction"]["failures"] for p in f["problems"]]
    assert any("via summary" in p for p in problems)
    assert not any("PostgreSQL 99" in p for p in problems)


def test_the_stored_notes_of_a_forging_model_hold_none_of_its_inventions(db_path: Path) -> None:
    """What the verbatim check keeps out: the invented number never reaches a stored note (the
    note citing a message that does not exist is mended to cite the turn holding its number)."""
    with FakeLLM("wrong_numbers") as llm, convmem.open(db_path, config=_config(llm)) as memory:
        behaviour.run_suite(behaviour.EngineDriver(memory), _cases(), clean=False)
        assert llm.requests
        summaries = [
            summary
            for job in memory.jobs(limit=1000)
            if job.kind.startswith("summary/llm:")
            for summary in memory.scope(job.tenant_id, str(job.payload["user_id"]))
            .conversation(str(job.conversation_id))
            .summaries()
        ]
    assert summaries  # the model's summaries were stored, with what the check kept
    notes = [note.text for summary in summaries for _, note in summary.snapshot.items()]
    assert not any("99" in text for text in notes)


def test_the_command_measures_faithfulness_with_the_model_it_is_given(
    db_path: Path, tmp_path: Path
) -> None:
    convmem.open(db_path).close()
    out = tmp_path / "out.json"
    with FakeLLM("good") as llm:
        ran = CliRunner().invoke(main, [
            "eval", "behaviour", "--db", str(db_path), "--json", str(out), "--kind", "compaction",
            "--case", "compaction-orders-kept", "--llm-base-url", llm.base_url,
            "--llm-model", "fake",
        ])  # fmt: skip
        assert llm.requests
    assert ran.exit_code == 0, ran.output
    assert "summary notes (llm:fake)" in ran.output
    faithfulness = json.loads(out.read_text())["faithfulness"]
    assert faithfulness["summarizer"] == "llm:fake"
    assert faithfulness["literals_verbatim_share"] == 1.0
