"""The principal's own things: who am I, settings, pins, export, delete everything, audit."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import JSONResponse

from convmem.domain.keys import KeyRefused, named_user
from convmem.domain.keys import acting_user as resolve_user
from convmem.service.auth import ActingScope, AnyKey, UserHeader, pin_origin
from convmem.service.convert import jsonable
from convmem.service.problems import ServiceError
from convmem.service.schemas import (
    AuditOut,
    DeletedAllOut,
    MeOut,
    MessageOut,
    PinCreate,
    PinOut,
    SettingsIn,
    SettingsOut,
)

router = APIRouter(prefix="/v1", tags=["account"])


@router.get("/me", response_model=MeOut)
def me(
    request: Request,
    key: AnyKey,
    user: Annotated[str | None, UserHeader] = None,
) -> dict[str, Any]:
    """The principal the key stands for. Signing in to the memory page starts here."""
    del user  # declared for the schema; read raw (named_user), as every route reads it
    acting = key.user_id if key.role == "user" else None
    if key.role == "app":
        try:
            named = named_user(request.scope["headers"])
            acting = None if named is None else resolve_user(key, named)
        except KeyRefused as exc:
            raise ServiceError(exc.status, exc.code, str(exc)) from exc
    return {"tenant": key.tenant_id, "role": key.role, "key_id": key.id, "user": acting}


@router.get("/settings", response_model=SettingsOut)
def get_settings(scope: ActingScope) -> dict[str, Any]:
    return {"memory_enabled": scope.memory_enabled()}


@router.put("/settings", response_model=SettingsOut)
def put_settings(body: SettingsIn, scope: ActingScope) -> dict[str, Any]:
    """The user's switch: off means nothing is read from or written to long-term memory."""
    scope.set_memory_enabled(body.memory_enabled)
    return {"memory_enabled": scope.memory_enabled()}


@router.get("/messages/{message_id}", response_model=MessageOut)
def get_any_message(
    message_id: Annotated[str, Path(min_length=1, max_length=256)], scope: ActingScope
) -> dict[str, Any]:
    """Any of the principal's messages by id: where a memory came from."""
    return scope.message(message_id).to_dict()


@router.get("/pins", response_model=list[PinOut])
def list_user_pins(scope: ActingScope) -> list[dict[str, Any]]:
    """Instructions pinned for every conversation of the user."""
    return [jsonable(pin) for pin in scope.pinned()]


@router.post("/pins", status_code=201, response_model=PinOut)
def pin_for_user(body: PinCreate, scope: ActingScope, key: AnyKey) -> dict[str, Any]:
    """Pin for every conversation of the user: an instruction with an application's key, the
    user's own request (sent quoted, never as system text) with a user key."""
    result: dict[str, Any] = jsonable(scope.pin(body.text, origin=pin_origin(key)))
    return result


@router.delete("/pins/{pin_id}", status_code=204, response_class=Response)
def unpin(
    pin_id: Annotated[str, Path(min_length=1, max_length=256)], scope: ActingScope
) -> Response:
    scope.unpin(pin_id)
    return Response(status_code=204)


@router.get(
    "/export",
    response_model=dict[str, Any],
    responses={200: {"description": "All of the user's data, as a JSON download."}},
)
def export(scope: ActingScope) -> JSONResponse:
    """All of the user's data: conversations, messages, memories, settings and the audit."""
    filename = f"convmem-export-{scope.tenant}-{scope.user}.json"
    return JSONResponse(
        jsonable(scope.export()), headers={"Content-Disposition": attachment(filename)}
    )


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` for a download named ``filename`` (any Unicode): an ASCII
    ``filename`` for old clients and the exact name as RFC 5987 ``filename*`` (RFC 6266), since
    a header value is Latin-1 bytes and an id like ``Łukasz`` is not."""
    plain = "".join(
        ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "_" for ch in filename
    )
    exact = "".join("_" if ch in "/\\" else ch for ch in filename)  # a name, never a path
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(exact, safe='')}"


@router.delete("/data", response_model=DeletedAllOut)
def delete_everything(scope: ActingScope) -> dict[str, Any]:
    """Delete every conversation, message, memory, summary and setting of the user, for real.
    The audit keeps that it happened, by whom and when."""
    return {"deleted": scope.delete_all()}


@router.get("/audit", response_model=list[AuditOut])
def audit(scope: ActingScope) -> list[dict[str, Any]]:
    """What happened to the user's data, by whom, when. Never the content."""
    return [event.to_dict() for event in scope.audit()]
