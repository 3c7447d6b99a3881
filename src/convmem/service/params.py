"""Query parameters a route does not declare are refused, as unknown body fields are: a typo
(``?statuses=``) should be an error, not a silently ignored filter. And the headers routes
share: ``Idempotency-Key`` on the routes that create messages and memories, and what a search
says of its ranking."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Header, Request, Response

from convmem.service.problems import ServiceError


async def known_query_only(request: Request) -> None:
    # a coroutine: no I/O, so no hop to the thread pool
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or not request.query_params:
        return
    # a walk over a handful of parameters, only for requests that carry a query string
    unknown = set(request.query_params) - _query_names(dependant)
    if unknown:
        # the names are not echoed: they are whatever the client sent
        raise ServiceError(
            422, "unknown_parameter", f"{len(unknown)} query parameter(s) this route does not take"
        )


def _query_names(dependant: Any) -> set[str]:
    """The query parameters a route's handler and its dependencies declare."""
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=256,
        description="Your name for this write: sent again with the same body, the first "
        "response comes back and nothing new is stored; with another body, 409 "
        "idempotency_conflict. Per user; kept for the database's idempotency period.",
    ),
]


def search_headers(response: Response, unembedded: int, degraded: tuple[str, ...]) -> None:
    """What a search ranked by words only: ``X-Convmem-Unembedded`` (candidates with no vector
    yet) and ``X-Convmem-Degraded`` (parts it went without, comma-separated)."""
    response.headers["X-Convmem-Unembedded"] = str(unembedded)
    if degraded:
        response.headers["X-Convmem-Degraded"] = ", ".join(degraded)
