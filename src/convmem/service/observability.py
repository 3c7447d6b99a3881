"""Request ids, body limits, metrics and structured logs: one ASGI middleware around the app.

Logs are JSON lines with the request id, the route template (never the raw query string, which
can hold search text), status, duration and the key's id; never message or memory content.
Metrics are kept in process and rendered in Prometheus' text format by ``/metrics``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from bisect import bisect_left
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

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
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Request counts by route and status, and a latency histogram by route."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, int], int] = {}
        self._buckets: dict[tuple[str, str], list[int]] = {}
        self._sums: dict[tuple[str, str], float] = {}
        self.in_flight = 0

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            key = (method, route, status)
            self._requests[key] = self._requests.get(key, 0) + 1
            counts = self._buckets.setdefault((method, route), [0] * (len(BUCKETS) + 1))
            counts[bisect_left(BUCKETS, seconds)] += 1
            self._sums[(method, route)] = self._sums.get((method, route), 0.0) + seconds

    def render(self) -> str:
        def labels(**pairs: object) -> str:
            inner = ",".join(
                f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                for k, v in pairs.items()
            )
            return "{" + inner + "}"

        lines = [
            "# HELP convmem_http_requests_total HTTP requests by method, route and status.",
            "# TYPE convmem_http_requests_total counter",
        ]
        with self._lock:
            for (method, route, status), n in sorted(self._requests.items()):
                lines.append(
                    f"convmem_http_requests_total{labels(method=method, route=route, status=status)} {n}"  # noqa: E501
                )
            lines += [
                "# HELP convmem_http_request_duration_seconds HTTP request latency by route.",
                "# TYPE convmem_http_request_duration_seconds histogram",
            ]
            for (method, route), counts in sorted(self._buckets.items()):
                running = 0
                for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
                    running += count
                    le = "+Inf" if bound == float("inf") else repr(bound)
                    lines.append(
                        "convmem_http_request_duration_seconds_bucket"
                        f"{labels(method=method, route=route, le=le)} {running}"
                    )
                sums = self._sums[(method, route)]
                lines.append(
                    f"convmem_http_request_duration_seconds_sum{labels(method=method, route=route)}"
                    f" {sums:.6f}"
                )
                lines.append(
                    "convmem_http_request_duration_seconds_count"
                    f"{labels(method=method, route=route)} {running}"
                )
            lines += [
                "# HELP convmem_http_requests_in_flight Requests being handled now.",
                "# TYPE convmem_http_requests_in_flight gauge",
                f"convmem_http_requests_in_flight {self.in_flight}",
            ]
        return "\n".join(lines) + "\n"


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

    def __init__(self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int) -> None:
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

        self.metrics.in_flight += 1
        try:
            if declared is not None and declared > limit:
                status = 413
                await _send_413(
                    send, f"the body is {declared} bytes; the limit is {limit}", request_id
                )
                return
            await self.app(scope, receive_limited, send_with_id)
        finally:
            self.metrics.in_flight -= 1
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            method = method if method in _METHODS else "OTHER"
            self.metrics.observe(method, template, status, elapsed)
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
