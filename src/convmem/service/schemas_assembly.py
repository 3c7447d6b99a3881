"""Request and response bodies of assembly: the model and options a request is assembled for,
the retrieved documents it carries, and the report of what went into it. Strict and closed like
every request body (``convmem.service.schemas``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from convmem.model.purpose import PURPOSES
from convmem.service.schemas import (
    DocumentLabel,
    DocumentNumber,
    Id,
    Label,
    MemoryK,
    Name,
    NonBlank,
    Parts,
    PurposeName,
    RequestBody,
    ResponseBody,
    Share,
    Text,
    Tokens,
    ToolsK,
    Window,
    valid_unicode,
)

DocumentKey = Annotated[str, StringConstraints(min_length=1, max_length=128), valid_unicode]
DocumentUrl = Annotated[str, StringConstraints(min_length=1, max_length=2048), valid_unicode]


class ModelIn(RequestBody):
    context_window: Window = 8192
    max_output: Tokens = 1024
    tokenizer: Literal["o200k_base", "cl100k_base", "estimate"] = "o200k_base"
    safety_margin: Tokens | None = None
    name: Label | None = Field(
        None, description="The provider's model id (tool costs depend on it)"
    )


class OptionsIn(RequestBody):
    eviction_block: float = Field(0.25, ge=0, lt=1, allow_inf_nan=False)
    max_tool_result_share: float = Field(0.5, gt=0, le=1, allow_inf_nan=False)
    memory_k: MemoryK = 32
    memory_share: float = Field(0.1, ge=0, lt=1, allow_inf_nan=False)
    memory_relevant_k: MemoryK = 4
    tools_k: ToolsK = Field(8, description="Most registry tools a request offers")
    tools_share: float = Field(
        0.15, ge=0, lt=1, allow_inf_nan=False, description="Most of the budget they may take"
    )
    documents_share: Share = Field(
        0.25, description="The budget's share held for retrieved documents when a request has them"
    )
    documents_floor: Share = Field(
        0.05, description="The least share they keep when the request cannot hold documents_share"
    )
    document_max_tokens: int = Field(
        2048, ge=1, le=1_000_000, description="Most tokens one document may cost (cut beyond)"
    )


class DocumentIn(RequestBody):
    """A retrieved document for one request (never stored)."""

    id: DocumentKey | DocumentNumber = Field(
        description="Its citation key in the request: [doc:ID]. Letters, digits and . : / # @ + "
        "= ~ - _ without spaces."
    )
    text: Text | None = Field(None, description="What the model reads (or give content)")
    content: Parts | None = Field(
        None, description="Content parts instead of text (text parts, media with its text)"
    )
    title: DocumentLabel | None = None
    source: DocumentLabel | None = None
    url: DocumentUrl | None = None
    date: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="ISO 8601 date or date-time (shown as the day)"
    )
    score: Annotated[float, Field(ge=-1e300, le=1e300, allow_inf_nan=False)] | None = Field(
        None, description="The caller's relevance, higher better; without it, by the message"
    )


class AssembleIn(RequestBody):
    user_message: NonBlank | None = Field(
        None, description="The new user turn (not stored). Leave out to answer the leaf."
    )
    model: ModelIn | None = None
    format: Literal["openai", "anthropic", "responses"] = "openai"
    system: Text | None = None
    leaf_id: Id | None = None
    options: OptionsIn | None = None
    purposes: list[PurposeName] | None = Field(
        None, description="Recall only memories of these purposes (default: every purpose the "
        "key and the route allow; more than that is a 403 purpose_not_allowed problem).",
        max_length=len(PURPOSES),
    )  # fmt: skip
    tools: list[dict[str, Any]] | None = Field(
        None,
        max_length=128,
        description="Tool definitions (OpenAI function schemas or Anthropic tool schemas), counted "
        "in the budget and returned in the format's shape",
    )
    offer_tools: bool = Field(
        False,
        description="Also offer the tenant's registered tools this request needs (relevant to the "
        "message and recent turns, or called earlier with the result still in the window)",
    )
    allow_risky: bool | list[Name] = Field(
        False,
        description="Registry tools of risk 'high' this request may offer: true for all, or names",
    )
    documents: list[DocumentIn] | None = Field(
        None,
        max_length=200,
        description="Retrieved documents for this message: sent after the recent turns as one "
        "quoted block with a citation key [doc:ID] each, within options.documents_share of the "
        "budget (held whenever documents are given, [] too); never stored",
    )


class DocumentUseOut(ResponseBody):
    id: str
    status: Literal["included", "trimmed", "dropped"]
    tokens: int = Field(description="What it costs in this request (0 when dropped)")
    full_tokens: int = Field(description="What it would have cost whole")


class ReportOut(ResponseBody):
    format: str
    tokenizer: str
    context_window: int
    max_output: int
    input_budget: int
    history_budget: int
    total_tokens: int
    sections: dict[str, int]
    included_ids: list[str]
    stubbed_ids: list[str]
    evicted_ids: list[str]
    evicted_count: int
    memory_ids: list[str]
    stable_prefix_hash: str
    # the summary used, the message it runs through, and how it was had (stored, built, ancestor)
    summary_id: str | None = None
    summary_through_id: str | None = None
    summary_source: str | None = None
    retrieved_ids: list[str] = Field(default_factory=list)
    entity_fact_ids: list[str] = Field(
        default_factory=list,
        description="Statements of the user's other conversations about the people and things "
        "the message names that the request carries (entity fact ids).",
    )
    degraded: list[str] = Field(
        default_factory=list,
        description="Parts skipped because they failed or ran past their time limits, e.g. "
        '"retrieval: timeout 1000 ms", "summary: error StoreError".',
    )
    unembedded: dict[str, int] = Field(
        default_factory=dict,
        description="With an embedder: the conversation's turns and the user's memories that "
        'had no vector yet, ranked by words only (e.g. {"turns": 3, "memories": 0}).',
    )
    tools_offered: list[str] = Field(default_factory=list)
    tools_suppressed: list[dict[str, str]] = Field(default_factory=list)
    memory_candidates: int = Field(0, description="Memories recall considered, before selection.")
    irrelevant_memory_ids: list[str] = Field(
        default_factory=list,
        description="Recalled memories that share no search term with the message.",
    )
    expired_memory_ids: list[str] = Field(
        default_factory=list,
        description="Expired memories that reached recall and were left out (normally none).",
    )
    summary_age_seconds: float | None = None
    summary_version: str | None = None
    cached_tokens: int = Field(
        0,
        description="Tokens a provider's prompt cache would serve, estimated against the "
        "previous recorded request of the conversation.",
    )
    cached_share: float = 0.0
    prefix_digests: list[str] = Field(
        default_factory=list,
        description="Digests of the request's parts in order (no content), for the estimate.",
    )
    media_tokens: dict[str, int] = Field(
        default_factory=dict, description="The media's share of the history and user sections."
    )
    media_stubbed_ids: list[str] = Field(default_factory=list)
    documents: list[DocumentUseOut] = Field(
        default_factory=list,
        description="The retrieved documents given, best first, and what became of each.",
    )
    session: Literal["hit", "miss", "bypass", "unavailable"] | None = Field(
        None,
        description="How the session tier answered the conversation's state: hit (Redis), miss "
        "(the database, put back), bypass (a write was open on it), unavailable (Redis away or "
        "slow: the database answered; degraded says why). Absent without a tier.",
    )


class AssembledOut(ResponseBody):
    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    report: ReportOut
    tools: list[dict[str, Any]] | None = None


class LastAssemblyOut(ResponseBody):
    conversation_id: str
    leaf_id: str | None
    at: datetime
    report: ReportOut
