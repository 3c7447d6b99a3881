"""Request and response bodies. Requests are strict and closed (unknown fields are refused), so
a typo or a smuggled field is a 422, never silently ignored."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
)

from convmem.model.memory import Basis
from convmem.model.policy import DEFAULT_SENSITIVE_PURPOSES, SPECIAL_CATEGORIES
from convmem.model.purpose import PURPOSES, Purpose

Id = Annotated[str, Field(min_length=1, max_length=256)]


def _valid_unicode(value: str) -> str:
    # JSON escapes can carry lone surrogates, which no database can store
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid unicode (no lone surrogates)") from exc
    return value


def _number(value: object) -> object:
    if isinstance(value, str | bool):
        raise ValueError("a number is a JSON number")
    return value


def _iso_text(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError("a date-time is an ISO 8601 string")
    return value


# Requests are strict (no "1" for 1, no "true" for true), but a date-time arrives as text and
# JSON Schema counts 2.0 as an integer. Constraints come before validators so that they reach
# the OpenAPI schema, where clients (and schemathesis) read them.
_unicode = AfterValidator(_valid_unicode)
Text = Annotated[str, _unicode]
Name = Annotated[str, StringConstraints(min_length=1, max_length=256), _unicode]
Label = Annotated[str, StringConstraints(max_length=200), _unicode]
Subject = Annotated[str, StringConstraints(min_length=1, max_length=200), _unicode]
# text the engine refuses when blank
# content parts as OpenAI, the Responses API, Anthropic or convmem write them (convmem.content.parts
# reads and checks them)
Parts = Annotated[list[dict[str, Any]], Field(min_length=1, max_length=100)]
NonBlank = Annotated[str, StringConstraints(min_length=1, pattern=r"\S"), _unicode]
DocumentLabel = Annotated[str, StringConstraints(max_length=500), _unicode]
MemoryText = Annotated[
    str, StringConstraints(min_length=1, max_length=1000, pattern=r"\S"), _unicode
]
SCOPE_PATTERN = r"^(user|project:.+)$"
MemoryScope = Annotated[
    str, StringConstraints(min_length=1, max_length=256, pattern=SCOPE_PATTERN), _unicode
]
Timestamp = Annotated[datetime, Strict(False), BeforeValidator(_iso_text)]
_as_number = BeforeValidator(_number)
Tokens = Annotated[int, Strict(False), Field(ge=0, le=100_000_000), _as_number]
Window = Annotated[int, Strict(False), Field(ge=1, le=100_000_000), _as_number]
MemoryK = Annotated[int, Strict(False), Field(ge=0, le=100), _as_number]
ToolsK = Annotated[int, Strict(False), Field(ge=0, le=128), _as_number]
Days = Annotated[int, Strict(False), Field(ge=1, le=36_500), _as_number]
Count = Annotated[int, Strict(False), Field(ge=1, le=1_000_000), _as_number]
SpecialCategory = Literal["health", "sensitive_category"]  # convmem.SPECIAL_CATEGORIES
ProposalBasis = Basis  # one of convmem's proposal bases
# a share of the input budget
Share = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
# a search engine's numeric document id (sent as its digits)
DocumentNumber = Annotated[int, Strict(False), Field(ge=0, le=10**18), _as_number]
Role = Literal["system", "user", "assistant", "tool"]
Category = Literal["preference", "profile", "constraint", "decision", "fact"]
PurposeName = Purpose  # one of convmem.PURPOSES
MemoryStatus = Literal["proposed", "confirmed", "superseded", "rejected"]
Metadata = dict[str, Any]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- requests -----------------------------------------------------------------------------------


class ConversationCreate(_Request):
    title: Text | None = None
    temporary: bool = False
    metadata: Metadata | None = None


class ToolCallIn(_Request):
    id: Name
    name: Name
    arguments: Text = "{}"


class MessageCreate(_Request):
    role: Role
    content: Text | Parts = ""
    keep_bytes: bool = Field(False, description="Keep inline media (data URLs, base64) bytes.")
    tool_calls: list[ToolCallIn] = Field(default_factory=list, max_length=128)
    tool_call_id: Name | None = None
    metadata: Metadata | None = None
    created_at: Timestamp | None = Field(
        None, description="For imports: when the message was written (naive times are UTC)."
    )
    parent_id: Id | None = Field(None, description="Append under this message, not the leaf.")


class MessageEdit(_Request):
    content: NonBlank | Parts
    keep_bytes: bool = False
    metadata: Metadata | None = None


class Regenerate(_Request):
    content: NonBlank | None = Field(
        None,
        description="The new reply. Without it (and without tool calls) the active leaf moves "
        "back to the message the reply answered, which is returned.",
    )
    tool_calls: list[ToolCallIn] | None = Field(None, max_length=128)
    metadata: Metadata | None = None


class ActiveLeaf(_Request):
    leaf_id: Id


class ModelIn(_Request):
    context_window: Window = 8192
    max_output: Tokens = 1024
    tokenizer: Literal["o200k_base", "cl100k_base", "estimate"] = "o200k_base"
    safety_margin: Tokens | None = None
    name: Label | None = Field(
        None, description="The provider's model id (tool costs depend on it)"
    )


class OptionsIn(_Request):
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


class DocumentIn(_Request):
    """A retrieved document for one request (never stored)."""

    id: (
        Annotated[str, StringConstraints(min_length=1, max_length=128), _unicode] | DocumentNumber
    ) = Field(
        description="Its citation key in the request: [doc:ID]. Letters, digits and . : / # @ + "
        "= ~ - _ without spaces."
    )
    text: Text | None = Field(None, description="What the model reads (or give content)")
    content: Parts | None = Field(
        None, description="Content parts instead of text (text parts, media with its text)"
    )
    title: DocumentLabel | None = None
    source: DocumentLabel | None = None
    url: Annotated[str, StringConstraints(min_length=1, max_length=2048), _unicode] | None = None
    date: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="ISO 8601 date or date-time (shown as the day)"
    )
    score: Annotated[float, Field(ge=-1e300, le=1e300, allow_inf_nan=False)] | None = Field(
        None, description="The caller's relevance, higher better; without it, by the message"
    )


class AssembleIn(_Request):
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


class ToolIn(_Request):
    definition: dict[str, Any] = Field(
        description="The tool in any provider's shape (OpenAI function, Responses, Anthropic)"
    )
    use_when: list[Text] = Field(
        default_factory=list,
        description="Short phrases of the requests the tool serves; used for ranking, never sent",
    )
    risk: Literal["low", "medium", "high"] = Field(
        "low", description="'high' tools are offered only when a request allows them"
    )


class ToolOut(_Response):
    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None
    use_when: list[str]
    risk: Literal["low", "medium", "high"]
    created_at: datetime
    updated_at: datetime


class PinCreate(_Request):
    text: NonBlank


class MemoryCreate(_Request):
    text: MemoryText
    category: Category | None = None
    subject: Subject | None = None
    scope: MemoryScope = "user"
    purpose: PurposeName = "personalization"
    expires_at: Timestamp | None = None
    source_message_id: Id | None = None
    confidence: float | None = Field(
        None, ge=0, le=1, allow_inf_nan=False,
        description="A proposal's confidence from 0 to 1 (default 0.5); ignored for a save.",
    )  # fmt: skip


class MemoryUpdate(_Request):
    text: MemoryText


class ReplacementQuery(_Request):
    text: MemoryText | None = Field(
        default=None, description="The edit's new text; omit to ask about confirming a suggestion."
    )


class SettingsIn(_Request):
    memory_enabled: bool


class KeyCreate(_Request):
    role: Literal["app", "user", "admin"]
    user: Name | None = Field(None, description="The user a 'user' key acts for.")
    name: Label | None = None
    purposes: list[PurposeName] | None = Field(
        None, description="The memory purposes requests made with the key may use (default: "
        "every purpose). Not for an admin key.", max_length=len(PURPOSES),
    )  # fmt: skip


class RetentionIn(_Request):
    """Days each layer keeps a row (null or absent: kept until deleted)."""

    transcripts: Days | None = None
    summaries: Days | None = None
    entities: Days | None = None
    memories: Days | None = None
    audit: Days | None = None
    indexes: Days | None = None
    proposals: Days | None = None


def _default_sensitive_purposes() -> list[Purpose]:
    return [cast("Purpose", p) for p in DEFAULT_SENSITIVE_PURPOSES]


class TenantPolicyIn(_Request):
    memory_disabled: bool = False
    # the transcripts' period under its first name; with ``retention`` it must agree
    retention_days: Days | None = None
    retention: RetentionIn | None = None
    # recall entity facts across conversations without each statement's confirmation
    recall_unconfirmed_entity_facts: bool = False
    sensitive_categories: list[SpecialCategory] = Field(
        default_factory=list, max_length=len(SPECIAL_CATEGORIES),
        description="Special categories a user may have kept on their explicit request only "
        "(none by default). Credentials, payment and bank details and ids are never kept.",
    )  # fmt: skip
    sensitive_purposes: list[PurposeName] = Field(
        default_factory=_default_sensitive_purposes, max_length=len(PURPOSES),
        description="The purposes memories of those categories are recalled for.",
    )  # fmt: skip
    max_pending_proposals: Count | None = Field(
        None, description="At most this many proposals wait per user (default: no cap)."
    )


# --- responses ----------------------------------------------------------------------------------


class ConversationOut(_Response):
    id: str
    title: str | None
    temporary: bool
    active_leaf_id: str | None
    metadata: Metadata
    created_at: datetime


class ToolCallOut(_Response):
    id: str
    name: str
    arguments: str


class MessageOut(_Response):
    id: str
    conversation_id: str
    parent_id: str | None
    depth: int
    role: Role
    content: str
    tool_calls: list[ToolCallOut]
    tool_call_id: str | None
    metadata: Metadata
    created_at: datetime
    parts: list[dict[str, Any]] | None = None


class BranchMessageOut(MessageOut):
    """A message of a branch with its place among its versions: ``version`` of ``versions``."""

    version: int
    versions: int


class MemoryOut(_Response):
    id: str
    scope: str
    category: Category
    subject_key: str
    text: str
    source_kind: str
    source_message_id: str | None
    status: MemoryStatus
    supersedes_id: str | None
    conflicts_with_id: str | None
    sensitivity: str = Field(
        description="'none', or the special categories (comma-separated) the tenant let the "
        "user keep on their explicit request."
    )
    purpose: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    confidence: float | None = Field(
        None, description="A proposal's confidence from 0 to 1 (null for what the user said)."
    )
    basis: ProposalBasis | None = Field(
        None, description="Why it was proposed: a statement in a turn, a statement repeated in "
        "several conversations, a model's extraction, or the application's proposal.",
    )  # fmt: skip


class EvidenceOut(_Response):
    memory_id: str
    message_ids: list[str]


class SupersededOut(_Response):
    id: str
    text: str


class NoticeOut(_Response):
    status: Literal["saved", "proposed", "blocked", "forgotten", "ambiguous"]
    text: str
    reason: str | None
    memory: MemoryOut | None
    memory_ids: list[str]
    superseded: list[SupersededOut] = Field(
        default_factory=list,
        description="The memories this save replaced (undo with POST /v1/memories/{id}/undo "
        "of the saved memory).",
    )
    records: list[SupersededOut] = Field(
        default_factory=list,
        description=(
            "The other memories the notice is about: the ones forgotten, the ones an ambiguous "
            "forget asks about, or the current ones a conflicting proposal (reason 'conflict') "
            "replaces once confirmed (POST /v1/memories/{id}/confirm)."
        ),
    )


class AppendedOut(MessageOut):
    notices: list[NoticeOut] = Field(
        default_factory=list, description="What the message did to long-term memory."
    )


class DocumentUseOut(_Response):
    id: str
    status: Literal["included", "trimmed", "dropped"]
    tokens: int = Field(description="What it costs in this request (0 when dropped)")
    full_tokens: int = Field(description="What it would have cost whole")


class ReportOut(_Response):
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
    retrieved_ids: list[str] = []
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
    tools_offered: list[str] = []
    tools_suppressed: list[dict[str, str]] = []
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
    media_stubbed_ids: list[str] = []
    documents: list[DocumentUseOut] = Field(
        default_factory=list,
        description="The retrieved documents given, best first, and what became of each.",
    )


class AssembledOut(_Response):
    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    report: ReportOut
    tools: list[dict[str, Any]] | None = None


class LastAssemblyOut(_Response):
    conversation_id: str
    leaf_id: str | None
    at: datetime
    report: ReportOut


class DeletedOut(_Response):
    deleted_ids: list[str]


class UndoneOut(_Response):
    memory: MemoryOut | None = Field(
        description="The changed memory as it now is (a suggestion again), or null: deleted."
    )
    restored: list[MemoryOut] = Field(description="The memories the change had replaced.")


class PinOut(_Response):
    id: str
    text: str
    conversation_id: str | None
    position: int
    created_at: datetime
    # "application": an instruction (an app or admin key pinned it); "user": the user's own
    # request (a user key), sent as quoted data
    origin: Literal["application", "user"]


class MemoryHitOut(_Response):
    memory: MemoryOut
    score: float
    retrievers: list[str]


class SettingsOut(_Response):
    memory_enabled: bool


class AuditOut(_Response):
    id: str
    user_id: str
    actor: str
    action: str
    object_kind: str
    object_id: str
    at: datetime
    details: dict[str, Any]


class DeletedAllOut(_Response):
    deleted: dict[str, int] = Field(description="Rows deleted per table.")


class MeOut(_Response):
    tenant: str
    role: Literal["app", "user", "admin"]
    key_id: str
    user: str | None = Field(description="The user the key acts for (an app key: the header's).")


class KeyOut(_Response):
    id: str
    tenant_id: str
    role: Literal["app", "user", "admin"]
    user_id: str | None
    name: str | None
    created_by: str
    created_at: datetime
    revoked_at: datetime | None
    purposes: list[str] | None


class KeyCreatedOut(_Response):
    key: KeyOut
    token: str = Field(description="The key itself. Shown once; convmem keeps only its hash.")


class RetentionOut(_Response):
    transcripts: int | None
    summaries: int | None
    entities: int | None
    memories: int | None
    audit: int | None
    indexes: int | None
    proposals: int | None


class TenantPolicyOut(_Response):
    tenant: str
    memory_disabled: bool
    retention_days: int | None
    retention: RetentionOut
    recall_unconfirmed_entity_facts: bool
    sensitive_categories: list[SpecialCategory]
    sensitive_purposes: list[PurposeName]
    max_pending_proposals: int | None


class HealthOut(_Response):
    status: Literal["ok"]


EntityKind = Literal["person", "animal", "place", "organisation", "project", "work", "thing"]


class EntityFactOut(_Response):
    id: str
    entity_id: str
    text: str
    message_id: str
    conversation_id: str
    said_at: datetime
    confidence: float
    extractor: str
    speaker: Literal["user", "assistant"] = Field(
        description="The role of the turn the statement was said in: the user's own words, or "
        "the assistant's."
    )
    speaker_name: str | None = Field(
        description="The participant's name the turn carried (a multi-party chat), if any."
    )
    status: Literal["proposed", "confirmed"] = Field(
        description="A proposal until the user confirms it; only a confirmed statement is "
        "recalled in other conversations (unless the tenant's policy says otherwise)."
    )


class EntityOut(_Response):
    id: str
    scope: str
    name: str
    type: EntityKind
    aliases: list[str]
    first_mention: datetime
    last_mention: datetime
    mention_count: int
    facts: list[EntityFactOut] = Field(
        default_factory=list,
        description="What was said about it, newest first (GET /v1/entities/{id}; empty in lists).",
    )


# --- page sessions (convmem.service.page_sessions) ---------------------------------------------


class SignInLinkOut(_Response):
    url: str = Field(description="The link to hand to the user: it works once, for 10 minutes.")
    expires_at: str


class LinkIn(_Request):
    token: str = Field(min_length=1, max_length=2000)


class PageSessionOut(_Response):
    tenant: str
    user: str
    expires_at: str
