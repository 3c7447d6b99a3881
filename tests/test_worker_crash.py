"""A summary job survives a worker crash: SIGKILL a real worker process in the middle of a model
call, start another, and the job completes once the dead worker's lease runs out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import convmem
from convmem.summarize import LLMSummarizerConfig
from tests.fake_llm import FakeLLM

SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")
DECISION = "Decision: we'll use PostgreSQL 16 for the orders database."


def worker(db_path: Path, base_url: str, *extra: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "convmem.cli.main",
        "worker",
        "--db",
        str(db_path),
        "--llm-base-url",
        base_url,
        "--llm-model",
        "fake",
        "--llm-timeout",
        "30",
        "--lease-seconds",
        "1.5",
        "--poll-seconds",
        "0.1",
        *extra,
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(condition: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_summary_job_survives_a_worker_crash(db_path: Path) -> None:
    with FakeLLM("hang") as llm:
        config = convmem.Config(summarizer=LLMSummarizerConfig(base_url=llm.base_url, model="fake"))
        with convmem.open(db_path, config=config) as memory:
            conv = memory.scope("acme", "alice").create_conversation()
            conv.append("user", DECISION)
            for i in range(40):
                conv.append("user", f"Turn {i}: tell me something nice about tea.")
                conv.append("assistant", "Tea has been enjoyed for ages by many people.")
            conv.assemble("continue", model=SMALL)
            [job] = memory.jobs()
            assert job.status == "pending"

            first = worker(db_path, llm.base_url)
            try:
                wait_for(llm.received.is_set, 30)  # the worker is inside the model call
                running = memory.jobs()[0]
                assert (running.status, running.attempts) == ("running", 1)
                os.kill(first.pid, signal.SIGKILL)
                assert first.wait(10) == -signal.SIGKILL
            finally:
                if first.poll() is None:
                    first.kill()
            crashed = memory.jobs()[0]
            assert crashed.status == "running"  # still leased to the dead worker
            assert conv.summaries() == []

            llm.mode = "good"
            llm.release.set()
            second = worker(db_path, llm.base_url, "--max-jobs", "1")
            try:
                assert second.wait(60) == 0, second.stderr.read() if second.stderr else ""
            finally:
                if second.poll() is None:
                    second.kill()
            done = memory.jobs()[0]
            assert done.id == job.id
            assert (done.status, done.attempts) == ("done", 2)
            records = conv.summaries()
            assert len(records) == 1
            assert records[0].fallback_reason is None
            assert DECISION in records[0].rendered
            ctx = conv.assemble("continue", model=SMALL)
            assert ctx.report.summary_source == "stored"
