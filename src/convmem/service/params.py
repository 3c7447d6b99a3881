"""Query parameters a route does not declare are refused, as unknown body fields are: a typo
(``?statuses=``) should be an error, not a silently ignored filter."""

from __future__ import annotations

from typing import Any

from fastapi import Request

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
