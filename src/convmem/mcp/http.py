"""The MCP server over streamable HTTP, behind the service's API keys.

Each HTTP request is authenticated on its own: ``Authorization: Bearer cmk_…`` names the tenant
and role, and an application key names its user in ``X-Convmem-User`` — the rules of the HTTP
service (``convmem.domain.keys.named_user`` reads the header, ``convmem.domain.keys.acting_user``
decides). The principal rides in the request's ASGI scope, where the tools read it; no tool argument
can change it.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp, Receive, Scope, Send

from convmem.domain.keys import KeyRefused, acting_user, named_user
from convmem.engine import Memory
from convmem.engine import Scope as Principal
from convmem.mcp.server import build_server

_PRINCIPAL = "convmem.principal"  # the ASGI scope key the tools read
_END_USER = "convmem.end_user"  # whether the request's key is held by the end user


class KeyAuth:
    """ASGI middleware: refuse a request without a valid key (401) or whose key may not act
    (403/400), as a problem+json body; put the acting principal in the scope otherwise."""

    def __init__(self, app: ASGIApp, memory: Memory) -> None:
        self.app = app
        self.memory = memory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            await _problem(send, 401, "unauthorized", "an API key is required: Bearer …")
            return
        key = await anyio.to_thread.run_sync(self.memory.keys.authenticate, token.strip())
        if key is None:
            await _problem(send, 401, "unauthorized", "the API key is not valid")
            return
        try:
            user = acting_user(key, named_user(scope["headers"]))  # as the HTTP service reads it
        except KeyRefused as exc:
            await _problem(send, exc.status, exc.code, str(exc))
            return
        scope[_PRINCIPAL] = self.memory.scope(
            key.tenant_id, user, actor=f"key:{key.id}", purposes=key.purposes
        )
        scope[_END_USER] = key.held_by_end_user
        await self.app(scope, receive, send)


async def _problem(send: Send, status: int, code: str, detail: str) -> None:
    body = json.dumps({"type": code, "title": code, "status": status, "detail": detail}).encode()
    headers = [(b"content-type", b"application/problem+json")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="convmem"'))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def principal_of_request(ctx: Context) -> Principal:
    """The principal ``KeyAuth`` put in the scope of the HTTP request carrying this tool call."""
    request: Any = ctx.request_context.request
    principal = None if request is None else request.scope.get(_PRINCIPAL)
    if not isinstance(principal, Principal):  # KeyAuth wraps every route; never reached
        raise PermissionError("no authenticated principal on this request")
    return principal


def application_request(ctx: Context) -> bool:
    """Whether the request carrying this tool call was made with an application's (or an
    admin's) key, which may write the application's instructions; a user key may not."""
    request: Any = ctx.request_context.request
    return request is not None and request.scope.get(_END_USER) is False


def http_app(memory: Memory, *, host: str = "127.0.0.1", path: str = "/mcp") -> ASGIApp:
    """The ASGI app: the MCP endpoint at ``path``, stateless (every request stands alone, so
    several server processes can share a database behind a load balancer), JSON responses."""
    server = build_server(principal_of_request, writes_instructions=application_request)
    app = server.streamable_http_app(
        streamable_http_path=path, stateless_http=True, json_response=True, host=host
    )
    return KeyAuth(app, memory)
