"""Request ids, body limits, metrics and structured logs: one ASGI middleware around the app.

Logs are JSON lines with the request id, the route template (never the raw query string, which
can hold search text), status, duration and the key's id; never message or memory content.
Metrics are ``convmem.ops.metrics.ProcessMetrics`` (prometheus_client, one registry per app),
rendered by ``/metrics``.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from convmem.ops.metrics import ProcessMetrics
from convmem.service.problems import PROBLEM_JSON

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("convmem.service")
REQUEST_ID_HEADER = "x-request-id"
_GOOD_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
# methods outside these are counted as OTHER, so clients cannot grow the label set
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message and the record's ``extra`` fields."""

    # the record's own attributes, and uvicorn's ANSI-coloured copy of its message
    _STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "color_message"}

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info and record.exc_info[0] is not None:
            out["error_type"] = record.exc_info[0].__name__  # the type only: messages quote data
        return json.dumps(out, default=str)


def configure_logging(level: str = "info") -> None:
    """JSON lines on stderr for convmem's loggers (uvicorn's access log stays off)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    for name in ("convmem", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False


async def _send_413(send: Send, detail: str, request_id: str) -> None:
    body = json.dumps(
        {
            "type": "urn:convmem:problem:content_too_large",
            "title": "Content too large",
            "status": 413,
            "code": "content_too_large",
            "detail": detail,
            "request_id": request_id,
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (REQUEST_ID_HEADER.encode(), request_id.encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ServiceMiddleware:
    """Request id, body-size limit (413 before the body is read), metrics and the access log."""

    def __init__(self, app: ASGIApp, *, metrics: ProcessMetrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = (
            dict(scope.get("headers") or []).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        )
        request_id = incoming if _GOOD_REQUEST_ID.match(incoming) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        limit = self.max_body_bytes
        declared = _content_length(scope)
        received = 0

        async def receive_limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # re-raised by FastAPI's body reading, answered by the problem handlers
                    raise HTTPException(413, f"the body is above the limit of {limit} bytes")
            return message

        self.metrics.http_in_flight.inc()
        try:
            if declared is not None and declared > limit:
                status = 413
                await _send_413(
                    send, f"the body is {declared} bytes; the limit is {limit}", request_id
                )
                return
            await self.app(scope, receive_limited, send_with_id)
        finally:
            self.metrics.http_in_flight.dec()
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            method = method if method in _METHODS else "OTHER"
            self.metrics.observe_http(method, template, status, elapsed)
            log.info(
                "request",
                extra={
                    "event": "http.request",
                    "request_id": request_id,
                    "method": method,
                    "route": template,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    "key_id": state.get("key_id"),
                    "tenant": state.get("tenant"),
                },
            )


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
