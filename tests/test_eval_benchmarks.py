"""The BEAM and REALTALK harnesses (``convmem eval beam|realtalk``): their published layouts read
and normalised, the shared report, quality measured without time limits; and the first-person
question in a user ↔ assistant chat, which the BEAM figures led to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.config import Config
from convmem.context.assemble import AssemblyOptions
from convmem.domain.search import SearchOptions, plan_query
from convmem.eval import beam, harness, realtalk
from convmem.eval.splits import SPLITS
from convmem.model.deadline import TimeLimits
from convmem.model.profile import ModelProfile

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


# --- published layouts, built small -------------------------------------------------------------


def _beam_chat(folder: Path, *, truncated: bool = False) -> None:
    """A chat folder in BEAM's layout: two batches, user turns ending in the index marker."""
    turns = [
        [{"role": "user", "id": 0, "time_anchor": "March-15-2024", "index": "1,1",
          "content": "I'm building a budget tracker in Flask and my first sprint ends on "
                     "March 29. ->-> 1,1"},
         {"role": "assistant", "id": 1,
          "content": "Great, a two-week sprint plan for Flask: " + "tasks " * 40}],
        [{"role": "user", "id": 2,
          "content": "I prefer minimal dependencies for the app. ->-> 1,2"},
         {"role": "assistant", "id": 3, "content": "Noted: keep dependencies minimal."}],
    ]  # fmt: skip
    later = [
        [{"role": "user", "id": 4, "time_anchor": "April-05-2024",
          "content": "The dashboard API now answers in 250ms after caching. ->-> 2,1"},
         {"role": "assistant", "id": 5, "content": "Caching brought the dashboard API to 250ms."}],
    ]  # fmt: skip
    chat = [
        {"batch_number": 1, "time_anchor": None, "turns": turns},
        {"batch_number": 2, "time_anchor": None, "turns": later},
    ]
    folder.mkdir(parents=True)
    name = "chat_trunecated.json" if truncated else "chat.json"
    (folder / name).write_text(json.dumps(chat))
    if truncated:  # the full chat beside the cut, as published: the cut is read
        (folder / "chat.json").write_text(json.dumps(chat[:1]))
    questions = {
        "abstention": [{"question": "What is my cat called?", "ideal_response": "unknown"}],
        "information_extraction": [
            {"question": "When does my first sprint end?", "source_chat_ids": "[0]"}
        ],
        "knowledge_update": [
            {"question": "How fast is the dashboard API?",
             "source_chat_ids": "{'original_info': [4], 'updated_info': [5, 99]}"}
        ],
        "event_ordering": [
            {"question": "In what order did I bring up the sprint, dependencies and caching?",
             "source_chat_ids": [0, [2, 4]]}
        ],
    }  # fmt: skip
    (folder / "probing_questions").mkdir()
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))


def _realtalk_chat(path: Path) -> None:
    def message(dia: str, speaker: str, text: str, at: str, **extra: Any) -> dict[str, Any]:
        return {"clean_text": text, "speaker": speaker, "date_time": at, "dia_id": dia,
                "img_file": [], "img_url": [], **extra}  # fmt: skip

    chat = {
        "name": {"speaker_1": "Emi", "speaker_2": "Elise"},
        "session_1": [
            message("D1:1", "Emi", "Hey! I'm cooking today.", "29.12.2023, 22:42:04"),
            message("D1:2", "elise", "Fun! I went skiing in Utah.", "29.12.2023, 22:43:10"),
            # D1:3 was an image-only message the published data dropped
            message("D1:4", "Emi", "Look at my pasta", "29.12.2023, 22:45:00",
                    blip_caption="a bowl of pasta with ham and peas"),
        ],
        "session_1_date_time": "29.12.2023, 22:42:04",
        "events_session_1": {"Emi": ["annotation, not input"]},
        "session_2": [
            message("D2:1", "elise", "Back from Turks and Caicos today.", "02.01.2024, 10:00:00"),
            message("D2:2", "Emi", "Welcome back! Skiing next?", "02.01.2024, 10:05:00"),
        ],
        "session_2_date_time": "02.01.2024, 10:00:00",
        "qa": [
            {"question": "What did Emi cook?", "answer": "pasta",
             "evidence": ["D1:1", "D1:3", "D1:4"], "category": 1},
            {"question": "When did Emi show her pasta?", "answer": "29 Dec", "evidence": ["D:4"],
             "category": 2},
            {"question": "Where did they ski?", "answer": "Utah", "evidence": ["D1:2. D2:2"],
             "category": 3},
            {"question": "What was in the photo?", "answer": "?", "evidence": ["D1:3"],
             "category": 3},
            {"question": "What happened in the first session?", "answer": "?",
             "evidence": ["D1:1-D1:2"], "category": 1},
        ],
    }  # fmt: skip
    path.write_text(json.dumps(chat))


def test_beam_layout_is_read_as_published(tmp_path: Path) -> None:
    _beam_chat(tmp_path / "100K" / "2")
    _beam_chat(tmp_path / "100K" / "10", truncated=True)
    data = beam.dataset(tmp_path / "100K")
    assert [s.sample_id for s in data.samples] == ["2", "10"]  # numeric order
    sample = data.samples[0]
    assert [t.role for t in sample.turns] == ["user", "assistant"] * 3
    assert not sample.named_speakers
    first = sample.turns[0]
    assert first.text.endswith("March 29.") and "->->" not in first.text  # the marker is off
    assert first.at.date().isoformat() == "2024-03-15"
    assert sample.turns[4].at.date().isoformat() == "2024-04-05"  # the second batch's anchor
    assert [t.session for t in sample.turns] == [1, 1, 2, 2, 3, 3]
    by_category = {q.category: q.evidence for q in sample.questions}
    assert by_category == {
        "information_extraction": ("0",),
        "knowledge_update": ("4", "5"),  # 99 names no turn: dropped and counted
        "event_ordering": ("0", "2", "4"),  # nested lists flattened
    }
    assert data.notes == {"evidence_ids_unknown": 2, "questions_without_evidence": 2}
    assert data.only(["2"]).notes == {"evidence_ids_unknown": 1, "questions_without_evidence": 1}
    assert len(data.samples[1].turns) == 6  # the 128K cut, not the shorter chat.json beside it
    assert data.categories == ("event_ordering", "information_extraction", "knowledge_update")


def test_beam_evidence_ids_in_every_published_shape() -> None:
    assert beam.evidence_ids("[4, 60, 116]") == ("4", "60", "116")
    assert beam.evidence_ids("{'first_statement': [58], 'second_statement': [24]}") == ("58", "24")
    assert beam.evidence_ids([116, 118, [136, 138], 118]) == ("116", "118", "136", "138")
    assert beam.evidence_ids("chat 12 and chat 14") == ("12", "14")  # no literal: its integers
    assert beam.evidence_ids(None) == ()
    assert beam.parse_anchor("March-15-2024") is not None and beam.parse_anchor(None) is None


def test_realtalk_evidence_is_normalised() -> None:
    known = ["D1:1", "D1:2", "D1:4", "D2:1", "D2:2", "D3:56"]
    assert realtalk.normalise_evidence(["D13:4. D1:1"], known) == (("D1:1",), 1)
    assert realtalk.normalise_evidence(["D1:1-D1:4"], known) == (("D1:1", "D1:2", "D1:4"), 1)
    assert realtalk.normalise_evidence(["D1:1-2"], known) == (("D1:1", "D1:2"), 0)
    # a missing session: the only session holding turn 56
    assert realtalk.normalise_evidence(["D:56"], known) == (("D3:56",), 0)
    # ambiguous turn 1: the session of the question's other evidence
    assert realtalk.normalise_evidence(["D:1", "D2:2"], known) == (("D2:1", "D2:2"), 0)
    assert realtalk.normalise_evidence(["D:1"], known) == ((), 1)  # still ambiguous: dropped


def test_realtalk_layout_is_read_as_published(tmp_path: Path) -> None:
    _realtalk_chat(tmp_path / "Chat_1_Emi_Elise.json")
    data = realtalk.dataset(tmp_path)
    (sample,) = data.samples
    assert sample.sample_id == "Chat_1_Emi_Elise"
    # "elise" in the messages is speaker_2 whatever its case
    assert [t.role for t in sample.turns] == ["user", "assistant", "user", "assistant", "user"]
    assert sample.turns[2].text == "Look at my pasta [image: a bowl of pasta with ham and peas]"
    assert sample.turns[3].at.isoformat() == "2024-01-02T10:00:00+00:00"
    questions = {q.question: (q.evidence, q.category) for q in sample.questions}
    assert questions == {
        "What did Emi cook?": (("D1:1", "D1:4"), "multi-hop"),
        "When did Emi show her pasta?": (("D1:4",), "temporal"),  # the one session with a 4
        "Where did they ski?": (("D1:2", "D2:2"), "open-domain"),
        "What happened in the first session?": (("D1:1", "D1:2"), "multi-hop"),
    }
    # D1:3 twice (the photo-only question's and the first's): no message holds it
    assert data.notes == {"evidence_ids_unknown": 2, "questions_without_evidence": 1}


# --- the shared harness -------------------------------------------------------------------------


def test_evidence_in_context_is_measured_without_time_limits(tmp_path: Path) -> None:
    """Retrieval cut short by a time limit would lower the quality figure with the machine's
    load: the harness's assemblies run without limits, however tight the Memory's are."""
    _realtalk_chat(tmp_path / "Chat_1_Emi_Elise.json")
    (sample,) = realtalk.dataset(tmp_path).samples
    tight = TimeLimits(memories=1e-9, tools=1e-9, retrieval=1e-9, summary=1e-9, embedder=1e-9)
    config = Config(embed_on_write=False, time_limits=tight)
    with convmem.open(tmp_path / "h.db", config=config) as memory:
        conv, dia_of = harness.import_sample(memory, sample, "realtalk")
        profile = ModelProfile(context_window=128, max_output=0, safety_margin=0)
        # the Memory's limits as configured: this request goes without its parts
        plain = conv.assemble("What did Emi cook?", model=profile, options=AssemblyOptions())
        assert plain.report.degraded
        rows = harness.Rows()
        variants = {"lexical": SearchOptions(retrievers=("lexical",))}
        harness._measure(memory, conv, dia_of, sample.questions[0], variants, (128, 256), rows)
    assert rows.assemblies == 4 and rows.degraded == {}
    assert set(rows.latency["lexical"][0]) and all(w >= 0 for w, _ in rows.latency["lexical"])


def test_eval_beam_cli_reports_per_ability_with_cpu_time(tmp_path: Path) -> None:
    _beam_chat(tmp_path / "100K" / "1")
    _beam_chat(tmp_path / "100K" / "2")
    out = tmp_path / "beam.json"
    result = CliRunner().invoke(
        main, ["eval", "beam", str(tmp_path / "100K"), "--embedder", "hashing", "--split", "A",
               "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "degraded assemblies: 0 of" in result.output
    data = json.loads(out.read_text())
    assert data["dataset"] == "beam" and data["split"] == "A"
    assert data["conversations"] == list(SPLITS["beam"]["A"])
    assert set(data["recall_at_k"]) == {"lexical", "lexical-no-ent", "vector", "hybrid",
                                        "hybrid-no-ent"}  # fmt: skip
    hybrid = data["recall_at_k"]["hybrid"]
    assert {"all", "information_extraction", "knowledge_update", "event_ordering"} <= set(hybrid)
    assert data["questions"]["all"] == 6
    assert data["degraded"]["degraded"] == 0 and data["degraded"]["assemblies"] == 6 * 4 * 2
    for values in data["latency_ms"].values():
        assert values["cpu_p95"] >= values["cpu_p50"] >= 0 and values["n"] == 6
    assert data["run"]["cpu_s"] >= 0
    # the chats of split A only (both here)
    assert data["normalised"] == {"evidence_ids_unknown": 2, "questions_without_evidence": 2}


def test_eval_realtalk_cli_on_one_file_and_unknown_samples(tmp_path: Path) -> None:
    path = tmp_path / "Chat_7_A_B.json"
    _realtalk_chat(path)
    out = tmp_path / "rt.json"
    runner = CliRunner()
    result = runner.invoke(
        main, ["eval", "realtalk", str(path), "--embedder", "none", "--no-context",
               "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["evidence_in_context"] == {} and set(data["latency_ms"]) == {"lexical"}
    assert {"all", "multi-hop", "temporal", "open-domain"} <= set(data["recall_at_k"]["lexical"])
    missing = runner.invoke(main, ["eval", "realtalk", str(path), "--samples", "Chat_9"])
    assert missing.exit_code != 0 and "no such sample" in missing.output
    empty = runner.invoke(main, ["eval", "realtalk", str(tmp_path / "nothing")])
    assert empty.exit_code != 0


@pytest.mark.skipif(not (DATA / "beam" / "100K").is_dir(), reason="BEAM dev chats not here")
def test_development_splits_name_the_development_chats() -> None:
    for name, folder in (("beam", DATA / "beam" / "100K"), ("realtalk", DATA / "realtalk")):
        loaded = beam.dataset(folder) if name == "beam" else realtalk.dataset(folder)
        ids = [s.sample_id for s in loaded.samples]
        a, b = SPLITS[name]["A"], SPLITS[name]["B"]
        assert sorted([*a, *b]) == sorted(ids) and not set(a) & set(b)
        assert all(s.questions for s in loaded.samples)


# --- the first-person question ------------------------------------------------------------------


def test_a_role_is_no_name_and_the_first_person_names_the_user() -> None:
    roles = ["assistant", "user"]
    plan = plan_query("How does user authentication work?", roles)
    assert plan.names == () and "user" in plan.terms  # a word, not a speaker
    plan = plan_query("When does my first sprint end?", roles)
    assert plan.names == ("user",) and plan.terms == ("first", "sprint", "end")
    assert plan.vector_text == "When does my first sprint end?"
    assert plan_query("When does my sprint end?", roles, self_reference=False).names == ()
    # named speakers: which of them is asking is not known
    assert plan_query("What did I say?", ["Caroline", "Melanie"]).names == ()
    assert plan_query("Did Caroline call me?", ["Caroline", "user"]).names == ("Caroline",)


def test_a_first_person_question_favours_what_the_user_said(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    said = conv.append("user", "Quick one: my flight to Lisbon leaves on Friday morning.")
    conv.append(
        "assistant",
        "Flights to Lisbon leave from several terminals. Before your flight to Lisbon leaves, "
        "check the flight status; Lisbon flights often leave early, so plan the trip to the "
        "airport with time to spare.",
    )
    conv.append("user", "Thanks, that helps.")
    question = "When does my flight to Lisbon leave?"
    lexical = SearchOptions(retrievers=("lexical",))
    assert conv.search(question, k=1, options=lexical)[0].message.id == said.id
    off = SearchOptions(retrievers=("lexical",), self_reference=False)
    assert conv.search(question, k=1, options=off)[0].message.id != said.id


def test_eval_measures_a_reranker_as_a_row_of_its_own(tmp_path: Path) -> None:
    """``--reranker``: the hybrid ranking reordered by the reranker is a row beside it, with its
    search latency; the reranker is a rerank API served on 127.0.0.1 (TEI's shape)."""
    from tests.model_server import ModelServer

    _beam_chat(tmp_path / "100K" / "1")
    out = tmp_path / "beam.json"
    with ModelServer() as server:
        result = CliRunner().invoke(
            main, ["eval", "beam", str(tmp_path / "100K"), "--embedder", "hashing",
                   "--reranker", f"tei+{server.url}", "--no-context", "--json", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.count("/rerank") >= 2 * 3  # a ranking and a timed search per question
    data = json.loads(out.read_text())
    assert "hybrid+rerank" in data["recall_at_k"] and "hybrid" in data["recall_at_k"]
    assert data["latency_ms"]["hybrid+rerank"]["n"] == data["latency_ms"]["hybrid"]["n"] == 3
    refused = CliRunner().invoke(
        main, ["eval", "beam", str(tmp_path / "100K"), "--reranker", "nonsense:x"]
    )
    assert refused.exit_code != 0 and "Traceback" not in refused.output
