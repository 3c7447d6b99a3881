"""``/v1/conversations``: the tree (append, edit, regenerate, switch branch, delete), assembly
and pins. Every handler is one engine call (or two) and a conversion; no rules of its own."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from convmem.context.assemble import AssemblyOptions
from convmem.model.messages import ToolCall
from convmem.model.profile import ModelProfile
from convmem.model.tree import MAX_COUNT
from convmem.service.auth import (
    ActingScope,
    AnyKey,
    held_by_end_user,
    pin_origin,
    refuse_system_text,
)
from convmem.service.convert import appended, jsonable
from convmem.service.params import IdempotencyKey, search_headers
from convmem.service.problems import ServiceError
from convmem.service.schemas import (
    ActiveLeaf,
    AppendedOut,
    BranchMessageOut,
    ConversationCreate,
    ConversationOut,
    DeletedOut,
    MessageCreate,
    MessageEdit,
    MessageOut,
    PinCreate,
    PinOut,
    Regenerate,
    ToolCallIn,
)
from convmem.service.schemas_assembly import AssembledOut, AssembleIn, DocumentIn, LastAssemblyOut

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])
ConversationId = Annotated[str, Path(min_length=1, max_length=256)]


def _calls(calls: list[ToolCallIn] | None) -> list[ToolCall]:
    return [ToolCall(c.id, c.name, c.arguments) for c in calls or ()]


@router.post("", status_code=201, response_model=ConversationOut)
def create_conversation(body: ConversationCreate, scope: ActingScope) -> dict[str, Any]:
    conv = scope.create_conversation(body.title, temporary=body.temporary, metadata=body.metadata)
    return conv.record().to_dict()


@router.get("", response_model=list[ConversationOut])
def list_conversations(
    scope: ActingScope,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[dict[str, Any]]:
    """The principal's conversations, newest first."""
    return [record.to_dict() for record in scope.conversations(limit=limit, offset=offset)]


@router.get("/{conversation_id}", response_model=ConversationOut)
def get_conversation(conversation_id: ConversationId, scope: ActingScope) -> dict[str, Any]:
    return scope.conversation(conversation_id).record().to_dict()


@router.delete("/{conversation_id}", status_code=204, response_class=Response)
def delete_conversation(conversation_id: ConversationId, scope: ActingScope) -> Response:
    """Delete the conversation with every message, for real."""
    scope.conversation(conversation_id).delete()
    return Response(status_code=204)


@router.get("/{conversation_id}/messages", response_model=list[MessageOut])
def list_messages(
    conversation_id: ConversationId,
    scope: ActingScope,
    limit: Annotated[
        int | None, Query(ge=1, le=1000, description="At most this many (default: all).")
    ] = None,
    after: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=256,
            description="The last message id of the previous page: the page after it.",
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """Every message of the tree, parents before children; paged with ``limit`` and ``after``."""
    messages = scope.conversation(conversation_id).messages()
    start = 0
    if after is not None:
        ids = [m.id for m in messages]
        if after not in ids:
            raise ServiceError(404, "not_found", "no such message in this conversation",
                               kind="message")  # fmt: skip
        start = ids.index(after) + 1
    end = len(messages) if limit is None else start + limit
    return [m.to_dict() for m in messages[start:end]]


@router.get("/{conversation_id}/branch", response_model=list[BranchMessageOut])
def get_branch(
    conversation_id: ConversationId,
    scope: ActingScope,
    leaf_id: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
    through: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=256,
            description="Instead of leaf_id: the branch through this message, on down to the "
            "active leaf when it lies below, else to the newest version at each step.",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=1000,
            description="Only the newest this many, ending at the leaf (default: all). The "
            "page before is the branch ending at the oldest one's parent_id.",
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """The messages from the root to ``leaf_id`` (default: the active leaf), oldest first, each
    with ``version`` of ``versions``: its place among its siblings (edits, regenerations)."""
    conv = scope.conversation(conversation_id)
    if through is not None:
        if leaf_id is not None:
            raise ServiceError(422, "invalid_input", "give leaf_id or through, not both")
        leaf_id = conv.leaf_through(through)
    window = conv.branch_window(leaf_id, limit=limit or MAX_COUNT)
    return [{**v.message.to_dict(), "version": v.number, "versions": v.count} for v in window]


@router.post("/{conversation_id}/messages", status_code=201, response_model=AppendedOut)
def append_message(
    conversation_id: ConversationId,
    body: MessageCreate,
    scope: ActingScope,
    key: AnyKey,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """Append under the active leaf (or ``parent_id``); the new message becomes the leaf.
    A system message needs the application's key."""
    refuse_system_text(key, body.role)
    # the append finds the conversation as the principal's itself (404 otherwise)
    message = scope.conversation_unread(conversation_id).append(
        body.role,
        body.content,
        tool_calls=_calls(body.tool_calls),
        tool_call_id=body.tool_call_id,
        metadata=body.metadata,
        created_at=body.created_at,
        parent_id=body.parent_id,
        keep_bytes=body.keep_bytes,
        idempotency_key=idempotency_key,
    )
    return appended(message)


@router.get("/{conversation_id}/messages/{message_id}", response_model=MessageOut)
def get_message(
    conversation_id: ConversationId, message_id: ConversationId, scope: ActingScope
) -> dict[str, Any]:
    return scope.conversation(conversation_id).message(message_id).to_dict()


@router.get("/{conversation_id}/messages/{message_id}/siblings", response_model=list[MessageOut])
def get_siblings(
    conversation_id: ConversationId, message_id: ConversationId, scope: ActingScope
) -> list[dict[str, Any]]:
    """The versions of a message (itself included), oldest first."""
    return [m.to_dict() for m in scope.conversation(conversation_id).siblings(message_id)]


@router.post(
    "/{conversation_id}/messages/{message_id}/edit", status_code=201, response_model=AppendedOut
)
def edit_message(
    conversation_id: ConversationId,
    message_id: ConversationId,
    body: MessageEdit,
    scope: ActingScope,
    key: AnyKey,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """A new version of the message, as its sibling; the active leaf moves to it. A system
    message's new version needs the application's key."""
    conversation = scope.conversation(conversation_id)
    if held_by_end_user(key):  # the message's role is read only when it matters
        refuse_system_text(key, conversation.message(message_id).role)
    edited = conversation.edit(
        message_id, body.content, metadata=body.metadata, keep_bytes=body.keep_bytes,
        idempotency_key=idempotency_key,
    )  # fmt: skip
    return appended(edited)


@router.post(
    "/{conversation_id}/messages/{message_id}/regenerate",
    status_code=201,
    response_model=AppendedOut,
)
def regenerate_message(
    conversation_id: ConversationId,
    message_id: ConversationId,
    body: Regenerate,
    scope: ActingScope,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """A new version of an assistant reply (see ``Conversation.regenerate``)."""
    message = scope.conversation(conversation_id).regenerate(
        message_id, body.content, tool_calls=_calls(body.tool_calls), metadata=body.metadata,
        idempotency_key=idempotency_key,
    )  # fmt: skip
    return appended(message)


@router.delete("/{conversation_id}/messages/{message_id}", response_model=DeletedOut)
def delete_message(
    conversation_id: ConversationId, message_id: ConversationId, scope: ActingScope
) -> dict[str, Any]:
    """Delete a message and its whole subtree, for real."""
    return {"deleted_ids": scope.conversation(conversation_id).delete_message(message_id)}


@router.put("/{conversation_id}/active-leaf", response_model=ConversationOut)
def switch_branch(
    conversation_id: ConversationId, body: ActiveLeaf, scope: ActingScope
) -> dict[str, Any]:
    """Make any message of the conversation the active leaf."""
    conv = scope.conversation(conversation_id)
    conv.switch_branch(body.leaf_id)
    return conv.record().to_dict()


@router.post("/{conversation_id}/assemble", response_model=AssembledOut)
def assemble(conversation_id: ConversationId, body: AssembleIn, scope: ActingScope) -> Any:
    """Build the next request from stored state: provider-format messages and the report.

    The report (token counts and ids, no content) is kept as the conversation's last assembled
    request for the memory page."""
    conv = scope.conversation_unread(conversation_id)  # assemble finds it as the principal's
    model = ModelProfile(**body.model.model_dump()) if body.model else None
    options = AssemblyOptions(**body.options.model_dump()) if body.options else None
    context = conv.assemble(
        body.user_message, model=model, format=body.format, system=body.system,
        leaf_id=body.leaf_id, options=options, purposes=body.purposes, tools=body.tools,
        offer_tools=body.offer_tools, allow_risky=body.allow_risky,
        documents=_documents(body.documents),
    )  # fmt: skip
    conv.record_assembly(context, body.leaf_id)
    return {
        "messages": context.messages,
        "system": context.system,
        "report": context.report.to_dict(),
        "tools": context.tools,
    }


def _documents(given: list[DocumentIn] | None) -> list[dict[str, Any]] | None:
    """The documents as the engine reads them (it checks them; the schema checks the shape)."""
    if given is None:
        return None
    return [document.model_dump(exclude_none=True) for document in given]


@router.get("/{conversation_id}/last-assembly", response_model=LastAssemblyOut)
def last_assembly(conversation_id: ConversationId, scope: ActingScope) -> dict[str, Any]:
    """The report of the last request assembled through the service for this conversation."""
    record = scope.conversation(conversation_id).last_assembly()
    if record is None:
        raise ServiceError(404, "not_found", "nothing has been assembled for this conversation",
                           kind="assembly")  # fmt: skip
    return record.to_dict()


@router.get("/{conversation_id}/pins", response_model=list[PinOut])
def list_pins(conversation_id: ConversationId, scope: ActingScope) -> list[dict[str, Any]]:
    """The instructions every request of the conversation carries: user-wide, then its own."""
    return [jsonable(pin) for pin in scope.conversation(conversation_id).pinned()]


@router.post("/{conversation_id}/pins", status_code=201, response_model=PinOut)
def pin_instruction(
    conversation_id: ConversationId, body: PinCreate, scope: ActingScope, key: AnyKey
) -> dict[str, Any]:
    """Pin for this conversation (who pins decides how it is sent: see ``POST /v1/pins``)."""
    pin = scope.conversation(conversation_id).pin(body.text, origin=pin_origin(key))
    result: dict[str, Any] = jsonable(pin)
    return result


@router.get("/{conversation_id}/search", response_model=list[dict[str, Any]])
def search_conversation(
    conversation_id: ConversationId,
    scope: ActingScope,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    response: Response,
    k: Annotated[int, Query(ge=1, le=100)] = 10,
) -> list[Any]:
    """Messages of this conversation ranked for ``q``. ``X-Convmem-Unembedded`` says how many
    of its turns had no vector yet (ranked by words only)."""
    hits = scope.conversation(conversation_id).search(q, k=k)
    search_headers(response, hits.unembedded, hits.degraded)
    return [jsonable(found) for found in hits]


@router.get("/{conversation_id}/summaries", response_model=list[dict[str, Any]])
def list_summaries(conversation_id: ConversationId, scope: ActingScope) -> list[Any]:
    """The stored summaries of this conversation (every branch), for inspection."""
    return [jsonable(record) for record in scope.conversation(conversation_id).summaries()]
