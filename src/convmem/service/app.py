"""The HTTP service: ``create_app(memory, settings)`` builds the FastAPI app.

The app holds one ``Memory`` (the engine) and nothing else: no global settings, no logic of its
own. Routes live in ``conversations``, ``memories``, ``entities``, ``account`` and ``admin``;
this module adds the operational routes, the memory page, error handling and the OpenAPI
touches.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from anyio import to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, PlainTextResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from convmem import __version__
from convmem.domain.page_sessions import PageSessions
from convmem.engine import Memory
from convmem.errors import InvalidInput
from convmem.model.purpose import check_purposes
from convmem.model.tree import DEFAULT_MAX_CONTENT_BYTES
from convmem.ops.metrics import CONTENT_TYPE, ProcessMetrics
from convmem.service import (
    account,
    admin,
    conversations,
    entities,
    memories,
    page_sessions,
    tools,
)
from convmem.service.auth import memory_of
from convmem.service.observability import ServiceMiddleware
from convmem.service.params import known_query_only
from convmem.service.problems import ERROR_STATUSES, PROBLEM_JSON, Problem, install_handlers
from convmem.service.schemas import HealthOut
from convmem.store.registry import scheme_of

WEB = files("convmem") / "web"
# The page loads only its own script and style; nothing inline, nothing from elsewhere — except
# the images of messages' content parts, from the application's own https URLs (thumbnails).
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

DEFAULT_HANDLER_THREADS = 4


def default_handler_threads(db: str | None) -> int:
    """Handler threads per process for the database at ``db`` (see ``handler_threads``).

    SQLite does its work inside the process, so another thread mostly takes the GIL from the
    first: one thread per process measured fastest (``benchmarks/service_load.py``), two nearly
    as fast, and two keep a process answering while one handler waits on another process's
    write. On PostgreSQL a handler also waits on the server, and a few threads overlap those
    waits."""
    on_postgres = db is not None and scheme_of(db) in ("postgresql", "postgres")
    return DEFAULT_HANDLER_THREADS if on_postgres else 2


@dataclass(frozen=True)
class ServiceSettings:
    """How the service runs. Built by ``convmem serve`` from options or the environment."""

    # Bodies above this are refused with 413 before they are read. Content may be up to the
    # engine's limit (1 MB) and JSON escaping can triple non-ASCII text, hence the headroom.
    max_body_bytes: int = 4 * DEFAULT_MAX_CONTENT_BYTES
    close_memory_on_shutdown: bool = False
    # Threads that run the (synchronous) handlers of one process; more requests than this queue,
    # first come first served, for a free one. Past a few, threads only contend for the GIL and
    # the database's writer lock: each request then costs more CPU and all of them finish late.
    handler_threads: int = DEFAULT_HANDLER_THREADS
    # Route path (as in the OpenAPI document, e.g. "/v1/conversations/{conversation_id}/assemble")
    # -> the memory purposes its requests may use, whatever their key allows; a route not named
    # here is capped by the key alone. See convmem.PURPOSES.
    route_purposes: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.handler_threads < 1:
            raise InvalidInput("handler_threads must be at least 1")
        for path, purposes in self.route_purposes.items():
            check_purposes(purposes, f"the purposes of route {path}")


def create_app(memory: Memory, settings: ServiceSettings | None = None) -> FastAPI:
    settings = settings or ServiceSettings()
    metrics = ProcessMetrics()
    memory.observer = metrics  # the engine reports each assembly to this app's registry

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Starlette runs sync endpoints and dependencies on anyio's default thread limiter
        to_thread.current_default_thread_limiter().total_tokens = settings.handler_threads
        yield
        # uvicorn has let every in-flight request finish by now
        if settings.close_memory_on_shutdown:
            memory.close()

    app = FastAPI(
        title="convmem",
        version=__version__,
        summary="The memory layer for LLM chat applications.",
        description="Conversations as message trees, token-budgeted context assembly and "
        "explicit long-term memory, per tenant and user. Authenticate with "
        "`Authorization: Bearer <key>`; errors are `application/problem+json`.",
        lifespan=lifespan,
        dependencies=[Depends(known_query_only)],
        docs_url=None,  # served by _docs_routes from local files, not a CDN
        redoc_url=None,
    )
    app.state.memory = memory
    app.state.route_purposes = {
        path: check_purposes(purposes) for path, purposes in settings.route_purposes.items()
    }
    app.state.metrics = metrics
    app.state.page_sessions = PageSessions(memory)
    install_handlers(app, metrics)
    for module in (conversations, memories, entities, account, admin, tools, page_sessions):
        app.include_router(module.router)
    _ops_routes(app, metrics)
    _page_routes(app)
    _docs_routes(app)
    app.add_middleware(ServiceMiddleware, metrics=metrics, max_body_bytes=settings.max_body_bytes)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _ops_routes(app: FastAPI, metrics: ProcessMetrics) -> None:
    @app.get("/healthz", response_model=HealthOut, tags=["operations"])
    def healthz(request: Request) -> dict[str, Any]:
        """Alive and able to read the database."""
        # a read through the engine of a tenant nobody has: the database answers and is migrated
        memory_of(request).scope("healthz", "healthz").memory_enabled()
        return {"status": "ok"}

    @app.get(
        "/metrics",
        response_class=PlainTextResponse,
        tags=["operations"],
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    )
    async def prometheus_metrics() -> PlainTextResponse:
        """Request counts, latencies and the pipeline's per-request numbers (tokens per section,
        memories, evictions, retrievals, summaries), in Prometheus' format; never content."""
        # on the event loop, not a handler thread: a scrape never waits behind busy handlers
        return PlainTextResponse(metrics.render(), media_type=CONTENT_TYPE)


def _page_routes(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse((WEB / "index.html").read_text("utf-8"), headers=PAGE_HEADERS)

    app.mount("/assets", StaticFiles(directory=str(WEB)), name="assets")


def _docs_routes(app: FastAPI) -> None:
    """Swagger UI at /docs from the files of the swagger-ui-bundle-v2 package, so the schema can
    be browsed on a machine without internet (FastAPI's default loads it from a CDN)."""
    app.mount("/docs/assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with every error documented as ``application/problem+json``."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
        tags=None,
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = Problem.model_json_schema()
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    problem = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            statuses = ERROR_STATUSES if path.startswith("/v1/") else (503,)
            for status in statuses:
                responses[str(status)] = {"description": _DESCRIPTIONS[status], "content": problem}
            if _takes_idempotency_key(operation):
                responses["409"] = {"description": _DESCRIPTIONS[409], "content": problem}
    app.openapi_schema = schema
    return schema


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    return any(
        parameter.get("in") == "header" and parameter.get("name", "").lower() == "idempotency-key"
        for parameter in operation.get("parameters", ())
    )


_DESCRIPTIONS = {
    400: "Malformed request (bad JSON; for an application key, a user header that is missing, "
    "sent twice, not ASCII (percent-encode UTF-8) or names an invalid user id).",
    401: "Missing, malformed, wrong or revoked API key.",
    403: "The key's role may not do this.",
    404: "No such object for this principal (another tenant's or user's ids too).",
    409: "The Idempotency-Key was already used for a different write (idempotency_conflict).",
    413: "The body or the content is above the limit.",
    422: "The request is well-formed but refused (schema, tree rules, policy, budget).",
    503: "The database is busy or failed; retry.",
}
