"""Who is calling: the API key in ``Authorization: Bearer`` decides the tenant, role and user.

An ``app`` key acts for any user of its tenant and names the user in ``X-Convmem-User``; a
``user`` key acts only for its own user; an ``admin`` key manages its tenant's keys and policy.
Nothing in a body or a path ever widens that: ids of another tenant or user are simply not
found by the engine, which answers 404 as for ids that do not exist.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from convmem.domain.keys import USER_HEADER, KeyRefused, named_user
from convmem.domain.keys import acting_user as resolve_user
from convmem.engine import Memory, Scope
from convmem.model.keys import ApiKey
from convmem.model.purpose import meet
from convmem.service.problems import ServiceError
from convmem.store.conversations import PinOrigin

_bearer = HTTPBearer(
    auto_error=False,
    bearerFormat="convmem API key",
    description="A convmem API key: `Authorization: Bearer cmk_…`.",
)


def memory_of(request: Request) -> Memory:
    memory: Memory = request.app.state.memory
    return memory


UserHeader = Header(
    alias=USER_HEADER,
    description="With an application key: the user to act for, ASCII, a user id outside it "
    "percent-encoded as UTF-8 (`%C5%81ukasz`); sent once. A user key may name only its own user.",
)


# Dependencies that do no I/O are coroutines: FastAPI runs a plain function on the thread pool,
# a hop that costs more than the work itself. ``api_key`` reads the key store, so it stays one.
def api_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey:
    """The active key the request presents; 401 when it is missing, malformed, wrong or revoked.
    Without one, a memory page's session cookie stands for its user (``page_session_key``)."""
    if credentials is None:
        key = page_session_key(request)
        if key is None:
            raise ServiceError(401, "unauthorized",
                               "an API key is required: Authorization: Bearer …")  # fmt: skip
        return key
    key = memory_of(request).keys.authenticate(credentials.credentials)
    if key is None:
        raise ServiceError(401, "unauthorized", "the API key is not valid")
    state = request.scope.setdefault("state", {})
    state["key_id"], state["tenant"] = key.id, key.tenant_id
    return key


PAGE_COOKIE = "convmem_page"


def page_session_key(request: Request) -> ApiKey | None:
    """The credential of a memory page's session cookie (``convmem.service.page_sessions``): a
    user key for the session's user, known by the session's id; None without a live session.
    The cookie is SameSite=Strict, so another site's request never carries it."""
    token = request.cookies.get(PAGE_COOKIE)
    session = request.app.state.page_sessions.authenticate(token) if token else None
    if session is None:
        return None
    state = request.scope.setdefault("state", {})
    state["key_id"], state["tenant"] = session.id, session.tenant_id
    return ApiKey(session.id, session.tenant_id, "user", session.user_id, "page session",
                  "page-session", session.created_at)  # fmt: skip


async def acting_user(
    request: Request,
    key: Annotated[ApiKey, Depends(api_key)],
    user: Annotated[str | None, UserHeader] = None,
) -> Scope:
    """The engine scope of the principal: tenant and user from the key (and, for an app key,
    the user it names); its memory purposes are what both the key and the route allow."""
    del user  # declared for the schema; read raw, as the MCP server reads it (named_user)
    try:
        acting = resolve_user(key, named_user(request.scope["headers"]))
    except KeyRefused as exc:
        raise ServiceError(exc.status, exc.code, str(exc)) from exc
    route = request.scope.get("route")
    route_cap = request.app.state.route_purposes.get(getattr(route, "path", None))
    # the audit records which key acted
    return memory_of(request).scope(
        key.tenant_id, acting, actor=f"key:{key.id}", purposes=meet(key.purposes, route_cap)
    )


async def admin_key(key: Annotated[ApiKey, Depends(api_key)]) -> ApiKey:
    if key.role != "admin":
        raise ServiceError(403, "forbidden", "this needs an admin key")
    return key


async def app_or_admin_key(key: Annotated[ApiKey, Depends(api_key)]) -> ApiKey:
    """An application's or an admin's key: what may manage the tenant's tool registry."""
    if key.role not in ("app", "admin"):
        raise ServiceError(403, "forbidden", "this needs an application or admin key")
    return key


ActingScope = Annotated[Scope, Depends(acting_user)]
AppOrAdminKey = Annotated[ApiKey, Depends(app_or_admin_key)]
AdminKey = Annotated[ApiKey, Depends(admin_key)]


def held_by_end_user(key: ApiKey) -> bool:
    """A user key (``ApiKey.held_by_end_user``): what it writes is the user's data."""
    return key.held_by_end_user


def pin_origin(key: ApiKey) -> PinOrigin:
    """Whose pin a key makes: the application's (an instruction) for an app or admin key, the
    end user's own request (sent as quoted data) for a user key."""
    return "user" if held_by_end_user(key) else "application"


def refuse_system_text(key: ApiKey, role: str) -> None:
    """A system message is the application's instruction: a user key may not write one."""
    if role == "system" and held_by_end_user(key):
        raise ServiceError(
            403, "forbidden", "system messages are the application's: a user key may not write one"
        )


AnyKey = Annotated[ApiKey, Depends(api_key)]
