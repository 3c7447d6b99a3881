"""The LoCoMo harness on a small slice of the development split, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from convmem.cli.main import main
from convmem.eval import locomo

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
needs_dev = pytest.mark.skipif(not DEV.is_file(), reason="the LoCoMo dev split is not here")


def test_evidence_and_dates_are_normalised() -> None:
    assert locomo.normalise_evidence(["D8:6; D9:17", "D30:05", "D8:6"]) == (
        "D8:6",
        "D9:17",
        "D30:5",
    )
    at = locomo.parse_session_date("1:56 pm on 8 May, 2023")
    assert (at.year, at.month, at.day, at.hour, at.minute) == (2023, 5, 8, 13, 56)
    assert locomo.recall_at(["a", "b", "c"], ("b", "z"), 2) == 0.5


@needs_dev
def test_harness_runs_on_a_slice_and_writes_the_documented_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main,
        ["eval", "locomo", str(DEV), "--samples", "conv-30", "--sessions", "3",
         "--questions", "8", "--embedder", "hashing", "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Evidence recall@k" in result.output and "Evidence in context" in result.output
    data = json.loads(out.read_text())
    assert set(data) >= {"recall_at_k", "evidence_in_context", "latency_ms"}
    assert set(data["recall_at_k"]) == {
        "lexical", "lexical-no-ent", "vector", "hybrid", "hybrid-no-ent"
    }  # fmt: skip
    for per_category in data["recall_at_k"].values():
        assert set(per_category["all"]) == {"1", "5", "10", "25", "50"}
        values = [per_category["all"][k] for k in ("1", "5", "10", "25", "50")]
        assert values == sorted(values) and values[0] >= 0 and values[-1] <= 1
    assert data["questions"]["all"] == 8
    context = data["evidence_in_context"]
    assert set(context) == {"sliding_window", "convmem"}
    assert set(context["convmem"]) == {"1024", "2048", "4096", "8192"}
    for budget, value in context["convmem"].items():
        assert value["mean_tokens"] <= int(budget)
        sliding = context["sliding_window"][budget]["evidence_share"]
        # Where the slice outgrows the window, recall brings evidence back; where a plain window
        # still holds the whole slice, convmem has already traded 30 % of it for the summary.
        if sliding < 1:
            assert value["evidence_share"] >= sliding
    assert set(data["latency_ms"]) == {"lexical", "hybrid"}
    assert data["latency_ms"]["hybrid"]["p95"] >= data["latency_ms"]["hybrid"]["p50"] > 0


@needs_dev
def test_entity_recall_is_reported_with_and_without_and_cross_checked(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main,
        ["eval", "locomo", str(DEV), "--sessions", "4", "--questions", "20", "--embedder",
         "none", "--entity-cross-check", "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    named = data["questions"]["names-entity"]
    assert 0 < named <= data["questions"]["all"]
    for row in ("lexical", "lexical-no-ent"):
        assert "names-entity" in data["recall_at_k"][row]
    checks = data["entity_cross_check"]
    assert [c["tuned_on"] for c in checks] == ["conv-26", "conv-30"]
    for check in checks:
        (tested,) = check["tested"]
        assert tested["on"] != check["tuned_on"]
        assert tested["without"]["n"]["all"] == tested["with"]["n"]["all"] > 0
    assert "Entity recall tuned on conv-26" in result.output


@needs_dev
def test_plot_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "plot.png"
    result = CliRunner().invoke(
        main,
        ["eval", "locomo", str(DEV), "--samples", "conv-30", "--sessions", "2",
         "--questions", "3", "--embedder", "none", "--plot", str(png)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_dev
def test_slice_keeps_only_questions_whose_evidence_was_imported() -> None:
    samples = locomo.load(DEV, sessions=2)
    for sample in samples:
        known = {t.dia_id for t in sample.turns}
        assert {t.session for t in sample.turns} == {1, 2}
        assert all(set(q.evidence) <= known for q in sample.questions)
        assert all(t.text for t in sample.turns)


@needs_dev
def test_shared_images_are_image_parts_with_their_captions(tmp_path: Path) -> None:
    import convmem
    from convmem.model.parts import ImagePart, TextPart

    (sample,) = [s for s in locomo.load(DEV, sessions=1) if s.sample_id == "conv-26"]
    shared = next(t for t in sample.turns if t.dia_id == "D1:5")
    with convmem.open(tmp_path / "l.db") as memory:
        conv, dia_of = locomo.import_sample(memory, sample)
        (message,) = [m for m in conv.messages() if dia_of[m.id] == "D1:5"]
    text, image = message.parts
    assert isinstance(text, TextPart) and text.text == shared.text
    assert isinstance(image, ImagePart)
    assert image.ref.url == "https://i.redd.it/l7hozpetnhlb1.jpg"
    assert image.caption == "a photo of a dog walking past a wall with a painting of a woman"
    assert "a photo of a dog walking past a wall" in message.content  # searched as text
    assert conv.search("dog walking past a wall painting")[0].message.id == message.id
