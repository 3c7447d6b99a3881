"""Errors as ``application/problem+json`` (RFC 9457) with stable codes.

Every error the service answers with is a ``Problem``: ``type`` (``urn:convmem:problem:<code>``),
``title``, ``status``, ``detail``, ``code`` and the ``request_id``, plus a few documented members
(``reason``, ``needed``/``available``, ``errors``). Details name ids, sizes and reasons, never
message or memory content. Client mistakes are 4xx and write nothing; only a fault of convmem
itself is a 500.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response
from starlette.routing import Match

from convmem.errors import (
    BudgetExceeded,
    ContentTooLarge,
    ConvmemError,
    IdempotencyConflict,
    InvalidDocument,
    InvalidMessage,
    InvalidQuery,
    NeverStoreViolation,
    NotFound,
    PurposeNotAllowed,
    StoreBusy,
    StoreError,
)
from convmem.ops.metrics import ProcessMetrics

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("convmem.service")

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    500: "Internal error",
    503: "Service unavailable",
}


class Problem(BaseModel):
    """An error answer. ``code`` is stable; ``detail`` is for people."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    code: str
    detail: str
    request_id: str | None = None


class ServiceError(Exception):
    """An error the service itself raises (authentication, roles, request shape)."""

    def __init__(self, status: int, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra


def problem_response(
    request: Request | None,
    status: int,
    code: str,
    detail: str,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    request_id = request.scope.get("state", {}).get("request_id") if request else None
    body = {
        "type": f"urn:convmem:problem:{code}",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "code": code,
        "detail": detail,
        "request_id": request_id,
        **extra,
    }
    return JSONResponse(
        body, status_code=status, media_type=PROBLEM_JSON, headers=dict(headers or {})
    )


def classify(exc: ConvmemError) -> tuple[int, str, dict[str, Any]]:
    """(status, code, extra members) for an engine error."""
    if isinstance(exc, NotFound):
        return 404, "not_found", {"kind": exc.kind}
    if isinstance(exc, ContentTooLarge):
        return 413, "content_too_large", {"size": exc.size, "limit": exc.limit}
    if isinstance(exc, BudgetExceeded):
        return 422, "budget_exceeded", {"needed": exc.needed, "available": exc.available}
    if isinstance(exc, PurposeNotAllowed):
        return 403, "purpose_not_allowed", {"purposes": exc.purposes}
    if isinstance(exc, IdempotencyConflict):
        return 409, "idempotency_conflict", {}
    if isinstance(exc, NeverStoreViolation):
        return 422, "never_store", {"reason": exc.reason}
    if isinstance(exc, InvalidMessage):
        return 422, "invalid_message", {}
    if isinstance(exc, InvalidQuery):
        return 422, "invalid_query", {}
    if isinstance(exc, InvalidDocument):
        return 422, "invalid_document", {}
    if isinstance(exc, StoreBusy):
        return 503, "store_busy", {}
    if isinstance(exc, StoreError):  # the message store failed (a part of memory degrades)
        return 503, "store_error", {}
    return 422, "invalid_input", {}


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    # the offending input is left out: it may be message content
    return [
        {"loc": [str(part) for part in error.get("loc", ())], "msg": error.get("msg", ""),
         "type": error.get("type", "")}
        for error in exc.errors()
    ]  # fmt: skip


def install_handlers(app: FastAPI, metrics: ProcessMetrics) -> None:
    """Map every exception to a problem response (counting the 404s for ids in ``metrics``)."""

    @app.exception_handler(ConvmemError)
    async def engine_error(request: Request, exc: ConvmemError) -> Response:
        status, code, extra = classify(exc)
        if isinstance(exc, NotFound):  # a missing id, or another principal's: one answer
            metrics.not_found_for(exc.kind)
        if status >= 500:
            _log_fault(request, exc)
        headers = {"Retry-After": "1"} if status == 503 else None
        detail = str(exc) if status < 500 else "the database failed; try again"
        return problem_response(request, status, code, detail, headers, **extra)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> Response:
        headers = {"WWW-Authenticate": 'Bearer realm="convmem"'} if exc.status == 401 else None
        return problem_response(request, exc.status, exc.code, exc.detail, headers, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        errors = _field_errors(exc)
        if any(error["type"] == "json_invalid" for error in errors):
            return problem_response(request, 400, "malformed_json", "the body is not valid JSON")
        return problem_response(
            request, 422, "invalid_request", "the request does not match the schema",
            errors=errors,
        )  # fmt: skip

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # FastAPI's own 400 is a body it could not parse (bad encoding, nesting too deep)
        codes = {
            400: ("malformed_json", "the body is not valid JSON"),
            404: ("not_found", "no such route"),
            405: ("method_not_allowed", str(exc.detail)),
            413: ("content_too_large", str(exc.detail)),
        }
        code, detail = codes.get(exc.status_code, (f"http_{exc.status_code}", str(exc.detail)))
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(request))
        return problem_response(request, exc.status_code, code, detail, headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        _log_fault(request, exc)
        # answered outside the service middleware, which would otherwise add the request id
        request_id = request.scope.get("state", {}).get("request_id")
        headers = {"X-Request-ID": request_id} if request_id else None
        return problem_response(
            request, 500, "internal_error", "convmem failed; see its logs", headers
        )


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers at this path (RFC 9110: a 405 lists them in ``Allow``).

    Starlette's own 405 names only the first route whose path matched, so a path served by a GET
    route and a POST route (``/v1/conversations``) would advertise POST alone. Each method is
    asked of the router as a request would be (included routers only say FULL or NONE reliably).
    """
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def _log_fault(request: Request, exc: BaseException) -> None:
    # The exception's type and where it happened, not its message: messages can quote data.
    frames = [f"{f.filename}:{f.lineno}:{f.name}" for f in traceback.extract_tb(exc.__traceback__)]
    log.error(
        "unhandled error",
        extra={
            "event": "http.fault",
            "request_id": request.scope.get("state", {}).get("request_id"),
            "error_type": type(exc).__name__,
            "frames": frames[-8:],
        },
    )


ERROR_STATUSES = (400, 401, 403, 404, 413, 422, 503)
