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
valid_unicode = AfterValidator(_valid_unicode)
Text = Annotated[str, valid_unicode]
Name = Annotated[str, StringConstraints(min_length=1, max_length=256), valid_unicode]
Label = Annotated[str, StringConstraints(max_length=200), valid_unicode]
Subject = Annotated[str, StringConstraints(min_length=1, max_length=200), valid_unicode]
# text the engine refuses when blank
# content parts as OpenAI, the Responses API, Anthropic or convmem write them (convmem.content.parts
# reads and checks them)
Parts = Annotated[list[dict[str, Any]], Field(min_length=1, max_length=100)]
NonBlank = Annotated[str, StringConstraints(min_length=1, pattern=r"\S"), valid_unicode]
DocumentLabel = Annotated[str, StringConstraints(max_length=500), valid_unicode]
MemoryText = Annotated[
    str, StringConstraints(min_length=1, max_length=1000, pattern=r"\S"), valid_unicode
]
SCOPE_PATTERN = r"^(user|project:.+)$"
MemoryScope = Annotated[
    str, StringConstraints(min_length=1, max_length=256, pattern=SCOPE_PATTERN), valid_unicode
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


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ResponseBody(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- requests -----------------------------------------------------------------------------------


class ConversationCreate(RequestBody):
    title: Text | None = None
    temporary: bool = False
    metadata: Metadata | None = None


class ToolCallIn(RequestBody):
    id: Name
    name: Name
    arguments: Text = "{}"


class MessageCreate(RequestBody):
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


class MessageEdit(RequestBody):
    content: NonBlank | Parts
    keep_bytes: bool = False
    metadata: Metadata | None = None


class Regenerate(RequestBody):
    content: NonBlank | None = Field(
        None,
        description="The new reply. Without it (and without tool calls) the active leaf moves "
        "back to the message the reply answered, which is returned.",
    )
    tool_calls: list[ToolCallIn] | None = Field(None, max_length=128)
    metadata: Metadata | None = None


class ActiveLeaf(RequestBody):
    leaf_id: Id


class ToolIn(RequestBody):
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


class ToolOut(ResponseBody):
    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None
    use_when: list[str]
    risk: Literal["low", "medium", "high"]
    created_at: datetime
    updated_at: datetime


class PinCreate(RequestBody):
    text: NonBlank


class MemoryCreate(RequestBody):
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


class MemoryUpdate(RequestBody):
    text: MemoryText


class ReplacementQuery(RequestBody):
    text: MemoryText | None = Field(
        default=None, description="The edit's new text; omit to ask about confirming a suggestion."
    )


class SettingsIn(RequestBody):
    memory_enabled: bool


class KeyCreate(RequestBody):
    role: Literal["app", "user", "admin"]
    user: Name | None = Field(None, description="The user a 'user' key acts for.")
    name: Label | None = None
    purposes: list[PurposeName] | None = Field(
        None, description="The memory purposes requests made with the key may use (default: "
        "every purpose). Not for an admin key.", max_length=len(PURPOSES),
    )  # fmt: skip


class RetentionIn(RequestBody):
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


class TenantPolicyIn(RequestBody):
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


class ConversationOut(ResponseBody):
    id: str
    title: str | None
    temporary: bool
    active_leaf_id: str | None
    metadata: Metadata
    created_at: datetime


class ToolCallOut(ResponseBody):
    id: str
    name: str
    arguments: str


class MessageOut(ResponseBody):
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


class MemoryOut(ResponseBody):
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


class EvidenceOut(ResponseBody):
    memory_id: str
    message_ids: list[str]


class SupersededOut(ResponseBody):
    id: str
    text: str


class NoticeOut(ResponseBody):
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


class DeletedOut(ResponseBody):
    deleted_ids: list[str]


class UndoneOut(ResponseBody):
    memory: MemoryOut | None = Field(
        description="The changed memory as it now is (a suggestion again), or null: deleted."
    )
    restored: list[MemoryOut] = Field(description="The memories the change had replaced.")


class PinOut(ResponseBody):
    id: str
    text: str
    conversation_id: str | None
    position: int
    created_at: datetime
    # "application": an instruction (an app or admin key pinned it); "user": the user's own
    # request (a user key), sent as quoted data
    origin: Literal["application", "user"]


class MemoryHitOut(ResponseBody):
    memory: MemoryOut
    score: float
    retrievers: list[str]


class SettingsOut(ResponseBody):
    memory_enabled: bool


class AuditOut(ResponseBody):
    id: str
    user_id: str
    actor: str
    action: str
    object_kind: str
    object_id: str
    at: datetime
    details: dict[str, Any]


class DeletedAllOut(ResponseBody):
    deleted: dict[str, int] = Field(description="Rows deleted per table.")


class MeOut(ResponseBody):
    tenant: str
    role: Literal["app", "user", "admin"]
    key_id: str
    user: str | None = Field(description="The user the key acts for (an app key: the header's).")


class KeyOut(ResponseBody):
    id: str
    tenant_id: str
    role: Literal["app", "user", "admin"]
    user_id: str | None
    name: str | None
    created_by: str
    created_at: datetime
    revoked_at: datetime | None
    purposes: list[str] | None


class KeyCreatedOut(ResponseBody):
    key: KeyOut
    token: str = Field(description="The key itself. Shown once; convmem keeps only its hash.")


class RetentionOut(ResponseBody):
    transcripts: int | None
    summaries: int | None
    entities: int | None
    memories: int | None
    audit: int | None
    indexes: int | None
    proposals: int | None


class TenantPolicyOut(ResponseBody):
    tenant: str
    memory_disabled: bool
    retention_days: int | None
    retention: RetentionOut
    recall_unconfirmed_entity_facts: bool
    sensitive_categories: list[SpecialCategory]
    sensitive_purposes: list[PurposeName]
    max_pending_proposals: int | None


class HealthOut(ResponseBody):
    status: Literal["ok"]


EntityKind = Literal["person", "animal", "place", "organisation", "project", "work", "thing"]


class EntityFactOut(ResponseBody):
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


class EntityOut(ResponseBody):
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


class SignInLinkOut(ResponseBody):
    url: str = Field(description="The link to hand to the user: it works once, for 10 minutes.")
    expires_at: str


class LinkIn(RequestBody):
    token: str = Field(min_length=1, max_length=2000)


class PageSessionOut(ResponseBody):
    tenant: str
    user: str
    expires_at: str
