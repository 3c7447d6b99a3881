"""Prometheus metrics of a convmem process, on a registry of its own (never the global one).

Each service app and each worker builds one ``ProcessMetrics``: tests create many apps in one
process, and a per-instance ``CollectorRegistry`` keeps their series apart. Labels are bounded,
enumerated values (methods, route templates, statuses, section names, summary sources); never a
user, tenant, id or any message or memory content. ``ProcessMetrics`` is also the engine's
``Observer``: the engine reports each assembly to it and it counts the report's numbers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from convmem.context.assemble import SECTION_ORDER
from convmem.context.report import AssemblyReport
from convmem.domain.memories import MEMORY_ACTIONS
from convmem.memory.policy import BlockReason
from convmem.model.memory import MemoryNotice
from convmem.store.base import Store
from convmem.summarize.extractive import VERSION as EXTRACTIVE_VERSION
from convmem.summarize.llm import PROMPT_VERSION as LLM_PROMPT_VERSION

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
TOKEN_BUCKETS = (0, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
SHARE_BUCKETS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
# a summary's age: from built for this request to a month old
AGE_BUCKETS = (1, 10, 60, 300, 900, 3600, 4 * 3600, 86400, 7 * 86400, 30 * 86400)
# the summarizers' versions convmem ships; a custom summarizer's reads as "other"
SUMMARY_VERSIONS = (EXTRACTIVE_VERSION, LLM_PROMPT_VERSION)
# the parts a request may go without (AssemblyReport.degraded, "part: error Class" or
# "part: timeout N ms")
DEGRADED_PARTS = (
    "memories", "tools", "retrieval", "summary", "embedder", "reranker", "session",
)  # fmt: skip
# how the session tier answered a request (convmem.store.session)
SESSION_OUTCOMES = ("hit", "miss", "bypass", "unavailable")
# how a request's summary was had (AssemblyReport.summary_source), "none" without one
SUMMARY_SOURCES = ("none", "stored", "built", "ancestor")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
JOB_STATUSES = ("pending", "running", "done", "failed")
NOTICE_STATUSES = ("saved", "proposed", "blocked", "forgotten", "ambiguous")
# why a save was refused: the never-store policy's codes and the memory switches
BLOCK_REASONS = (*(r.value for r in BlockReason), "memory_off", "memory_disabled_for_tenant")
# how many jobs a scrape reads per status; a queue deeper than this reads as this deep
QUEUE_SCAN_LIMIT = 10_000


class ProcessMetrics:
    """The HTTP and pipeline collectors of one process (or one app), and its exposition."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.http_requests = Counter(
            "convmem_http_requests", "HTTP requests by method, route and status.",
            ["method", "route", "status"], registry=r,
        )  # fmt: skip
        self.http_duration = Histogram(
            "convmem_http_request_duration_seconds", "HTTP request latency by route.",
            ["method", "route"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.http_in_flight = Gauge(
            "convmem_http_requests_in_flight", "Requests being handled now.", registry=r
        )
        self.assemblies = Counter(
            "convmem_assemblies", "Requests assembled, by how the summary was had.",
            ["summary_source"], registry=r,
        )  # fmt: skip
        self.request_tokens = Histogram(
            "convmem_request_tokens", "Tokens of an assembled request (tokens per turn).",
            buckets=TOKEN_BUCKETS, registry=r,
        )  # fmt: skip
        self.section_tokens = Histogram(
            "convmem_request_section_tokens", "Tokens of an assembled request, by section.",
            ["section"], buckets=TOKEN_BUCKETS, registry=r,
        )  # fmt: skip
        self.selected_memories = Histogram(
            "convmem_request_selected_memories", "Memories recalled into an assembled request.",
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.evicted_messages = Histogram(
            "convmem_request_evicted_messages", "Messages evicted from an assembled request.",
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.retrieved_messages = Histogram(
            "convmem_request_retrieved_messages",
            "Evicted messages retrieved back into an assembled request.",
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.candidate_memories = Histogram(
            "convmem_request_candidate_memories",
            "Memories recall considered for an assembled request, before selection.",
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.irrelevant_memories = Histogram(
            "convmem_request_irrelevant_memories",
            "Memories recalled into an assembled request that share no search term with its "
            "message (irrelevant recall; its rate is this sum over the selected sum).",
            buckets=COUNT_BUCKETS, registry=r,
        )  # fmt: skip
        self.expired_selected = Counter(
            "convmem_recall_expired_selected",
            "Expired memories recall was handed and had to leave out (0 unless the store's "
            "expiry filter fails: a correctness alarm).", registry=r,
        )  # fmt: skip
        self.summary_age = Histogram(
            "convmem_request_summary_age_seconds",
            "Age of the summary an assembled request carries (seconds since it was built).",
            buckets=AGE_BUCKETS, registry=r,
        )  # fmt: skip
        self.summary_versions = Counter(
            "convmem_request_summaries",
            "Assembled requests carrying a summary, by the summarizer's version.",
            ["version"], registry=r,
        )  # fmt: skip
        self.degraded_parts = Counter(
            "convmem_request_degraded_parts",
            "Parts assembled requests went without because they failed, by part.",
            ["part"], registry=r,
        )  # fmt: skip
        self.cached_tokens = Histogram(
            "convmem_request_cached_tokens",
            "Tokens of an assembled request a provider's prompt cache would serve (estimated "
            "from the previous recorded request's prefix).",
            buckets=TOKEN_BUCKETS, registry=r,
        )  # fmt: skip
        self.cached_share = Histogram(
            "convmem_request_cached_share",
            "Share of an assembled request's tokens a provider's prompt cache would serve.",
            buckets=SHARE_BUCKETS, registry=r,
        )  # fmt: skip
        self.stubbed_messages = Counter(
            "convmem_request_stubbed_messages",
            "Oversized tool results stubbed in assembled requests.", registry=r,
        )  # fmt: skip
        self.jobs_run = Counter(
            "convmem_jobs_run", "Jobs a worker ran, by kind and outcome (done, retry, failed).",
            ["kind", "outcome"], registry=r,
        )  # fmt: skip
        self.job_failures = Counter(
            "convmem_job_failures", "Failed job attempts, by kind and the error's type name.",
            ["kind", "reason"], registry=r,
        )  # fmt: skip
        self.retention_sweeps = Counter(
            "convmem_retention_sweeps", "Retention passes a worker ran.", registry=r
        )
        self.retention_deleted = Counter(
            "convmem_retention_deleted_conversations",
            "Conversations deleted by retention passes.", registry=r,
        )  # fmt: skip
        self.retention_rows = Counter(
            "convmem_retention_deleted_rows",
            "Rows deleted by retention sweeps, by layer (transcripts: conversations).",
            ["layer"], registry=r,
        )  # fmt: skip
        self.retention_last_sweep = Gauge(
            "convmem_retention_last_sweep_timestamp_seconds",
            "When the last retention pass finished (Unix time; 0: none yet).", registry=r,
        )  # fmt: skip
        self.notices = Counter(
            "convmem_memory_notices",
            "What memory writes came to: saved, proposed, blocked, forgotten, ambiguous.",
            ["status"], registry=r,
        )  # fmt: skip
        self.memory_blocks = Counter(
            "convmem_memory_blocks", "Memory writes refused, by reason code.", ["reason"],
            registry=r,
        )  # fmt: skip
        self.memory_supersessions = Counter(
            "convmem_memory_supersessions", "Memories superseded by a newer statement.",
            registry=r,
        )  # fmt: skip
        self.memory_changes = Counter(
            "convmem_memory_changes",
            "Users' changes to existing memories: confirmed, rejected, corrected, deleted "
            "(memories removed, with their history), restored, resolved.",
            ["action"], registry=r,
        )  # fmt: skip
        self.not_found = Counter(
            "convmem_not_found",
            "404s for ids the principal does not own (missing, or another principal's: the "
            "two are one answer by design), by kind of object.",
            ["kind"], registry=r,
        )  # fmt: skip
        self.session_requests = Counter(
            "convmem_session_tier_requests",
            "Assembled requests by how the session tier answered their state: hit (Redis), "
            "miss (the database, put back), bypass (a write was open), unavailable (Redis away "
            "or slow: the database answered).",
            ["outcome"], registry=r,
        )  # fmt: skip
        for outcome in SESSION_OUTCOMES:
            self.session_requests.labels(outcome)
        for status in NOTICE_STATUSES:
            self.notices.labels(status)
        for reason in BLOCK_REASONS:
            self.memory_blocks.labels(reason)
        for action in MEMORY_ACTIONS:
            self.memory_changes.labels(action)
        for source in SUMMARY_SOURCES:  # every series exists from the start, at zero
            self.assemblies.labels(source)
        for section in SECTION_ORDER:
            self.section_tokens.labels(section)
        for version in (*SUMMARY_VERSIONS, "other"):
            self.summary_versions.labels(version)
        for part in (*DEGRADED_PARTS, "other"):
            self.degraded_parts.labels(part)

    # --- the engine's Observer ------------------------------------------------------------------

    def assembled(self, report: AssemblyReport) -> None:
        source = report.summary_source if report.summary_source in SUMMARY_SOURCES else "none"
        self.assemblies.labels(source).inc()
        self.request_tokens.observe(report.total_tokens)
        for section, tokens in report.sections.items():
            if section in SECTION_ORDER:  # a bounded label set, whatever a report holds
                self.section_tokens.labels(section).observe(tokens)
        self.selected_memories.observe(len(report.memory_ids))
        self.evicted_messages.observe(report.evicted_count)
        self.retrieved_messages.observe(len(report.retrieved_ids))
        self.stubbed_messages.inc(len(report.stubbed_ids))
        self.candidate_memories.observe(report.memory_candidates)
        self.irrelevant_memories.observe(len(report.irrelevant_memory_ids))
        self.expired_selected.inc(len(report.expired_memory_ids))
        if report.summary_id is not None:
            if report.summary_age_seconds is not None:
                self.summary_age.observe(report.summary_age_seconds)
            self.summary_versions.labels(_bounded(report.summary_version, SUMMARY_VERSIONS)).inc()
        for degraded in report.degraded:
            part = degraded.partition(":")[0]
            self.degraded_parts.labels(_bounded(part, DEGRADED_PARTS)).inc()
        self.cached_tokens.observe(report.cached_tokens)
        self.cached_share.observe(report.cached_share)
        if report.session is not None:
            self.session_requests.labels(_bounded(report.session, SESSION_OUTCOMES)).inc()

    def memory_notices(self, notices: Sequence[MemoryNotice]) -> None:
        for notice in notices:
            self.notices.labels(_bounded(notice.status, NOTICE_STATUSES)).inc()
            if notice.status == "blocked" and notice.reason is not None:
                self.memory_blocks.labels(_bounded(notice.reason, BLOCK_REASONS)).inc()
            if notice.superseded:
                self.memory_supersessions.inc(len(notice.superseded))

    def memory_changed(self, action: str, count: int) -> None:
        self.memory_changes.labels(_bounded(action, MEMORY_ACTIONS)).inc(count)

    # --- HTTP -----------------------------------------------------------------------------------

    def observe_http(self, method: str, route: str, status: int, seconds: float) -> None:
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_duration.labels(method, route).observe(seconds)

    # --- the worker -----------------------------------------------------------------------------

    def job_ran(self, kind: str, outcome: str, reason: str | None = None) -> None:
        """``outcome``: done, retry (failed, will run again) or failed (attempts used up)."""
        self.jobs_run.labels(kind, outcome).inc()
        if reason is not None:
            self.job_failures.labels(kind, reason).inc()

    def retention_swept(self, deleted: int, layers: Mapping[str, int] | None = None) -> None:
        """A pass: ``deleted`` conversations, and the rows deleted per layer."""
        self.retention_sweeps.inc()
        self.retention_deleted.inc(deleted)
        for layer, count in (layers or {}).items():
            self.retention_rows.labels(layer).inc(count)
        self.retention_last_sweep.set(time.time())

    def watch_queue(self, store: Store) -> None:
        """Add the job queue's depth by status and its oldest pending job's age, read at each
        scrape (every tenant's jobs: an operator's view, no tenant label)."""
        self.registry.register(QueueCollector(store))

    def not_found_for(self, kind: str) -> None:
        self.not_found.labels(kind).inc()

    def render(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)


def _bounded(value: str | None, known: Sequence[str]) -> str:
    """A label value from a known set, "other" otherwise: a label set never grows with input."""
    return value if value is not None and value in known else "other"


class QueueCollector(Collector):
    """The job queue as gauges, read from the store when scraped."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "convmem_jobs", f"Jobs in the queue by status (at most {QUEUE_SCAN_LIMIT} counted).",
            labels=["status"],
        )  # fmt: skip
        oldest = GaugeMetricFamily(
            "convmem_jobs_oldest_pending_age_seconds",
            "Age of the oldest pending job (0 when none is pending).",
        )
        with self._store.read() as tx:
            by_status = {s: tx.list_jobs(s, QUEUE_SCAN_LIMIT) for s in JOB_STATUSES}
        for status, jobs in by_status.items():
            depth.add_metric([status], len(jobs))
        pending = by_status["pending"]
        age = 0.0
        if pending:  # newest first: the last is the oldest
            age = max(0.0, time.time() - min(job.created_at for job in pending).timestamp())
        oldest.add_metric([], age)
        yield depth
        yield oldest

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(())
