"""``--device`` for the worker and backfill (issue 33 item 6): the CPU by default, CUDA when asked
for and present, and a clear refusal (``InvalidConfig``, exit code 2 on the command line) when
asked for and absent or not a device."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.errors import InvalidConfig
from convmem.retrieval.vector import check_device, cuda_device_count, on_device


def _cuda_devices() -> int:
    return cuda_device_count() or 0


def test_the_cpu_is_always_a_device_and_a_non_device_is_refused() -> None:
    assert check_device("cpu") == "cpu"
    for wrong in ("tpu", "cuda:x", "cpu:1", ""):
        with pytest.raises(InvalidConfig, match="not a device"):
            check_device(wrong)


@pytest.mark.skipif(_cuda_devices() > 0, reason="this machine has a CUDA device")
def test_cuda_asked_for_and_absent_is_refused_with_the_reason() -> None:
    with pytest.raises(InvalidConfig, match="no CUDA device"):
        check_device("cuda")
    with pytest.raises(InvalidConfig, match="no CUDA device"):
        on_device(convmem.HashingEmbedder(), "cuda:0")


@pytest.mark.skipif(_cuda_devices() == 0, reason="no CUDA device here")
def test_cuda_present_takes_an_in_process_model_only() -> None:  # pragma: no cover - GPU hosts
    assert check_device("cuda") == "cuda"
    with pytest.raises(InvalidConfig, match="does not run in this process"):
        on_device(convmem.HashingEmbedder(), "cuda")


def test_a_model_that_runs_elsewhere_stays_as_it_is_on_the_cpu() -> None:
    hashing = convmem.HashingEmbedder()
    assert on_device(hashing, "cpu") is hashing
    assert on_device(None, "cpu") is None


@pytest.mark.skipif(_cuda_devices() > 0, reason="this machine has a CUDA device")
def test_backfill_and_worker_refuse_an_absent_device_before_touching_the_database(
    db_path: Path,
) -> None:
    with convmem.open(db_path) as memory:
        memory.scope("acme", "alice").create_conversation().append("user", "a turn to embed")
    runner = CliRunner()
    for command in (
        ["backfill", "--db", str(db_path), "--embedder", "hashing", "--device", "cuda"],
        ["worker", "--db", str(db_path), "--embedder", "hashing", "--device", "cuda", "--once"],
    ):
        result = runner.invoke(main, command)
        assert result.exit_code == 2, result.output
        assert "no CUDA device" in result.output
    with convmem.open(db_path) as memory, memory.store.read() as tx:
        assert len(tx.missing_message_vectors("hashing-256", 10)) == 1  # nothing was embedded
    done = runner.invoke(
        main, ["backfill", "--db", str(db_path), "--embedder", "hashing", "--device", "cpu"]
    )
    assert done.exit_code == 0, done.output
    assert "1 messages" in done.output
