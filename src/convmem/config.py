"""Configuration: one frozen value, built by the caller (or the CLI) and passed in."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from convmem.domain.search import SearchOptions
from convmem.model.deadline import TimeLimits
from convmem.model.profile import ModelProfile
from convmem.model.tree import DEFAULT_MAX_CONTENT_BYTES
from convmem.retrieval.index import DEFAULT_SESSION_GAP
from convmem.summarize.llm import LLMSummarizerConfig


@dataclass(frozen=True)
class Config:
    """How a ``Memory`` behaves.

    ``tokenizers``: counted for every message at write time (the estimate always is), so assembly
    for these never re-tokenises history. Assembly for another tokenizer counts on the fly.

    ``summarizer``: None for the extractive summarizer, run inline by assembly; an
    ``LLMSummarizerConfig`` for a model, run by ``convmem worker`` (assembly then queues jobs and
    uses the newest ready ancestor summary meanwhile). An inline build that would read more than
    ``max_inline_summary_messages`` turns (a long conversation summarised for the first time) is
    queued for the worker instead. Summaries are chained in segments of at most
    ``summary_segment_messages`` messages: the part a use re-checks.
    ``embed_on_write``: with an embedder, the vectors of the messages and memories this process
    writes are filled in the background right after each write (``Memory.wait_for_vectors``
    waits for them); a write never waits on or fails with the embedder. Off, the worker or
    ``Memory.backfill_embeddings`` fills them in batches later, which suits imports.
    ``session_gap``: a pause longer than this separates two turns' sessions; neighbours in
    different sessions are not indexed as context of each other.
    ``idempotency_hours``: how long an idempotency key holds its write (a retry within it gets
    the original result; after it the key is free again).
    ``entities``: derive entity memory (the people, places and things turns mention, and the
    sentences about them) as each user or assistant turn is written; off, nothing is derived
    until ``Scope.entities.rebuild``.
    ``time_limits``: how long each optional part of an assembly (memory recall, retrieval, the
    summary lookup, the embedder) may take before the request goes on without it; a request's
    ``AssemblyOptions.time_limits`` overrides them.
    """

    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES
    tokenizers: tuple[str, ...] = ("o200k_base", "cl100k_base")
    default_model: ModelProfile = field(default_factory=ModelProfile)
    summarizer: LLMSummarizerConfig | None = None
    max_inline_summary_messages: int = 1000
    summary_segment_messages: int = 256
    summary_job_attempts: int = 5
    search: SearchOptions = field(default_factory=SearchOptions)
    embed_on_write: bool = True
    idempotency_hours: float = 24.0
    session_gap: timedelta = DEFAULT_SESSION_GAP
    time_limits: TimeLimits = field(default_factory=TimeLimits)
    entities: bool = True
