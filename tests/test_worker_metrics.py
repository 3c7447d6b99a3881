"""The worker's metrics: real summary jobs and retention passes through a real worker move the
jobs, failures, queue and retention series; ``convmem worker --metrics-port`` serves them."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

import convmem
from convmem.model.messages import Message
from convmem.model.snapshot import Snapshot
from convmem.ops.metrics import ProcessMetrics
from convmem.ops.worker import Worker
from convmem.summarize import LLMSummarizer, LLMSummarizerConfig
from convmem.summarize.base import SummaryResult
from convmem.testing.clock import written_days_ago
from tests.fake_llm import FakeLLM
from tests.service.conftest import free_port
from tests.test_retention import chat

SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")
MARKER = "Zanzibar-7731"  # content that must never reach a metric


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def scrape(metrics: ProcessMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return samples(metrics.render().decode())


def queued_summary(memory: convmem.Memory) -> convmem.Conversation:
    """A conversation long enough that assembling it queues a summary job for the worker."""
    conv = memory.scope("acme", "alice").create_conversation()
    for i in range(40):
        conv.append("user", f"Turn {i}: {MARKER} tell me something nice about tea.")
        conv.append("assistant", "Tea has been enjoyed for ages, in many ways, by many people.")
    conv.assemble("continue", model=SMALL)
    return conv


class UnreachableModel:
    """The configured model's summarizer (same name and version, so it claims its jobs) whose
    every call fails as a lost connection would: the worker's failure path, for real."""

    def __init__(self, real: LLMSummarizer) -> None:
        self.name, self.prompt_version, self.inline = real.name, real.prompt_version, False

    def summarize(self, previous: Snapshot | None, turns: Sequence[Message]) -> SummaryResult:
        raise ConnectionError("connection refused")


def test_jobs_queue_and_failures_are_counted(db_path: Path) -> None:
    with FakeLLM("good") as llm:
        settings = LLMSummarizerConfig(base_url=llm.base_url, model="fake", retry_backoff=0)
        config = convmem.Config(summarizer=settings, summary_job_attempts=1)
        with convmem.open(db_path, config=config) as memory:
            queued_summary(memory)
            metrics = ProcessMetrics()
            broken = Worker(memory, [UnreachableModel(LLMSummarizer(settings))], metrics=metrics)
            kind = next(iter(broken.flows))
            before = scrape(metrics)
            assert before[("convmem_jobs", (("status", "pending"),))] == 1
            assert before[("convmem_jobs_oldest_pending_age_seconds", ())] >= 0

            assert broken.run_once() is not None  # fails, with its one attempt used
            after = scrape(metrics)
            failed = (("kind", kind), ("reason", "ConnectionError"))
            assert after[("convmem_job_failures_total", failed)] == 1
            assert after[("convmem_jobs_run_total", (("kind", kind), ("outcome", "failed")))] == 1
            assert after[("convmem_jobs", (("status", "failed"),))] == 1

            memory.retry_job(memory.jobs()[0].id)  # an operator puts it back in the queue
            worker = Worker(memory, metrics=metrics)
            assert worker.run(exit_when_idle=True) == 1
            done = scrape(metrics)
            assert done[("convmem_jobs_run_total", (("kind", kind), ("outcome", "done")))] == 1
            assert done[("convmem_jobs", (("status", "pending"),))] == 0
            assert done[("convmem_jobs", (("status", "done"),))] == 1
            assert done[("convmem_jobs_oldest_pending_age_seconds", ())] == 0
            text = metrics.render().decode()
            assert MARKER not in text and "acme" not in text and "alice" not in text


def test_retention_passes_are_counted(memory: convmem.Memory) -> None:
    metrics = ProcessMetrics()
    assert scrape(metrics)[("convmem_retention_last_sweep_timestamp_seconds", ())] == 0
    memory.set_tenant_policy("acme", retention_days=7)
    alice = memory.scope("acme", "alice")
    with written_days_ago(8):
        chat(alice.create_conversation())
        chat(alice.create_conversation())
    chat(alice.create_conversation())  # written today: kept
    worker = Worker(memory, metrics=metrics, retention_seconds=3600)
    started = time.time()
    assert worker.apply_retention_if_due() == {"acme": 2}
    assert worker.apply_retention_if_due() is None  # not due again within the hour
    after = scrape(metrics)
    assert after[("convmem_retention_sweeps_total", ())] == 1
    assert after[("convmem_retention_deleted_conversations_total", ())] == 2
    assert after[("convmem_retention_last_sweep_timestamp_seconds", ())] >= started


def test_the_worker_command_serves_its_metrics(db_path: Path) -> None:
    convmem.open(db_path).close()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli.main", "worker", "--db", str(db_path),
         "--metrics-port", str(port), "--poll-seconds", "0.2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        # the process starts, opens the database, serves, then its first loop runs a retention
        # pass: scrape until that pass shows (a loaded machine may take a while)
        for _ in range(1200):
            if process.poll() is not None:
                raise AssertionError("the worker exited")
            with contextlib.suppress(httpx.TransportError):
                found = samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text)
            if found.get(("convmem_retention_sweeps_total", ()), 0) >= 1:
                break
            time.sleep(0.1)
        assert found[("convmem_retention_sweeps_total", ())] >= 1  # the first loop runs one
        assert found[("convmem_jobs", (("status", "pending"),))] == 0
    finally:
        process.terminate()
        process.wait(timeout=30)
