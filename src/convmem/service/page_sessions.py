"""``/v1/page-sessions``: how an application sends one of its users to their memory page.

The application mints a sign-in link with its app key for the user it names in
``X-Convmem-User``; the page exchanges the link's token (single use, 10 minutes) for a session
held in an HttpOnly, SameSite=Strict cookie, which the service reads as that user's credential
(``convmem.service.auth``): the page's script never holds an API key. The link carries its token
in the URL's fragment, which browsers never send to a server, so it stays out of access logs and
Referer headers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from convmem.domain.page_sessions import SESSION_LIFETIME, PageSessions
from convmem.model.keys import ApiKey
from convmem.service.auth import PAGE_COOKIE, ActingScope, AnyKey
from convmem.service.problems import ServiceError
from convmem.service.schemas import LinkIn, PageSessionOut, SignInLinkOut

router = APIRouter(prefix="/v1/page-sessions", tags=["page sessions"])


def sessions_of(request: Request) -> PageSessions:
    sessions: PageSessions = request.app.state.page_sessions
    return sessions


async def app_key(key: AnyKey) -> ApiKey:
    if key.role != "app":
        raise ServiceError(403, "forbidden", "an application key mints sign-in links")
    return key


@router.post("", status_code=201, response_model=SignInLinkOut)
def mint_link(
    request: Request, scope: ActingScope, key: Annotated[ApiKey, Depends(app_key)]
) -> dict[str, Any]:
    """A sign-in link for the user named in ``X-Convmem-User`` (application keys only)."""
    issued = sessions_of(request).mint_link(scope.tenant, scope.user)
    return {
        "url": f"{request.base_url}#/sign-in/{issued.token}",
        "expires_at": issued.session.expires_at.isoformat(),
    }


@router.post("/exchange", response_model=PageSessionOut)
def exchange(body: LinkIn, request: Request, response: Response) -> dict[str, Any]:
    """Use a sign-in link: the session cookie is set; the link is refused from now on."""
    issued = sessions_of(request).exchange(body.token)
    if issued is None:
        raise ServiceError(401, "link_refused",
                           "this sign-in link has expired or was already used")  # fmt: skip
    response.set_cookie(
        PAGE_COOKIE, issued.token, max_age=int(SESSION_LIFETIME.total_seconds()), path="/",
        httponly=True, samesite="strict", secure=request.url.scheme == "https",
    )  # fmt: skip
    session = issued.session
    return {"tenant": session.tenant_id, "user": session.user_id,
            "expires_at": session.expires_at.isoformat()}  # fmt: skip


@router.delete("/current", status_code=204, response_class=Response)
def sign_out(request: Request) -> Response:
    """End this browser's page session (sign out) and clear its cookie."""
    token = request.cookies.get(PAGE_COOKIE)
    if token:
        sessions_of(request).end(token)
    response = Response(status_code=204)
    response.delete_cookie(PAGE_COOKIE, path="/", httponly=True, samesite="strict")
    return response
