"""What assembly returns: the provider-ready request and its report of what went into it and
why (ids and counts only, never content)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AssemblyReport:
    """What went into the request and why; ids only, never content."""

    format: str
    tokenizer: str
    context_window: int
    max_output: int
    safety_margin: int
    input_budget: int
    history_budget: int
    total_tokens: int
    sections: dict[str, int]
    included_ids: list[str]
    stubbed_ids: list[str]
    evicted_ids: list[str]
    evicted_count: int
    incomplete_ids: list[str]
    stable_prefix_hash: str
    summary_id: str | None = None
    # the summary's through-message, and how it was had: "stored" (found by key), "built" (run
    # inline now), "ancestor" (an older one while the worker builds the right one)
    summary_through_id: str | None = None
    summary_source: str | None = None
    memory_ids: list[str] = field(default_factory=list)
    retrieved_ids: list[str] = field(default_factory=list)
    # the entity facts sent (ids of ``EntityFact``: statements of the user's other conversations)
    entity_fact_ids: list[str] = field(default_factory=list)
    # memories recall considered before the caps and the token room chose ``memory_ids``
    memory_candidates: int = 0
    # recalled memories the message shares no search term with (convmem.memory.recall.bearing)
    irrelevant_memory_ids: list[str] = field(default_factory=list)
    # memories handed to recall after they expired, left out (the store filters them; any id
    # here means that filter failed: a correctness alarm)
    expired_memory_ids: list[str] = field(default_factory=list)
    # how old the summary used is (seconds since it was built) and its summarizer's version
    summary_age_seconds: float | None = None
    summary_version: str | None = None
    # tokens per turn is ``total_tokens``; these estimate the part a provider's prompt cache
    # would serve, from the previous recorded request (convmem.context.prompt_cache)
    cached_tokens: int = 0
    cached_share: float = 0.0
    prefix_digests: list[str] = field(default_factory=list)
    # the parts skipped because they failed or ran past their time limits, each "part: reason"
    # (part one of memories, retrieval, summary, embedder; the reason is "timeout N ms" or
    # "error" and the error's class, never content)
    degraded: list[str] = field(default_factory=list)
    # rows recall and retrieval could rank by words only because they have no vector yet
    # (written while the embedder was busy or down; filled in the background): the
    # conversation's turns and the user's memories, with an embedder (else empty)
    unembedded: dict[str, int] = field(default_factory=dict)
    # the tools offered (names, in request order) and the registry's tools left out, each as
    # {"name", "reason"}
    tools_offered: list[str] = field(default_factory=list)
    tools_suppressed: list[dict[str, str]] = field(default_factory=list)
    # the share of a section's tokens that media (images, files, audio sent as such) costs, for
    # "history" and "user"; the text's share is the rest
    media_tokens: dict[str, int] = field(default_factory=lambda: {"history": 0, "user": 0})
    # messages whose media went as stubs naming them (old images before whole turns)
    media_stubbed_ids: list[str] = field(default_factory=list)
    # the retrieved documents given, best first, each {"id", "status" (included | trimmed |
    # dropped), "tokens" (in this request), "full_tokens" (whole)}; their texts are not kept
    documents: list[dict[str, Any]] = field(default_factory=list)
    # how the session tier answered the request's state: "hit" (from Redis), "miss" (read from
    # the database and put back), "bypass" (a write was open on it), "unavailable" (Redis away:
    # from the database; ``degraded`` says why); None without a tier
    session: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AssembledContext:
    """A provider-ready request. For Anthropic, ``system`` holds the system blocks apart.
    ``tools`` are the tool definitions in the format's shape, for the provider call's ``tools``
    parameter (None when the request offers none)."""

    messages: list[dict[str, Any]]
    report: AssemblyReport
    system: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
