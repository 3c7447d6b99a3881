"""The harnesses convmem's own run of the contract suite uses (pyproject's ``convmem_backends``):
SQLite as published, and PostgreSQL through a connection that checks every statement for Citus
routing. The harnesses themselves live in ``convmem.testing``; the names below are re-exported
for the tests of this folder."""

from __future__ import annotations

from typing import Any

import convmem
from convmem.testing import Backend, Harness, PostgresHarness, RecordKind, SQLiteHarness
from convmem.testing.fixtures import start_or_skip
from convmem.testing.harness import Unavailable

__all__ = [
    "Backend",
    "Harness",
    "RecordKind",
    "RoutedPostgresHarness",
    "SQLiteHarness",
    "Unavailable",
    "start_or_skip",
]


class RoutedPostgresHarness(PostgresHarness):
    """``PostgresHarness`` whose every statement must be routable to one Citus shard."""

    def open(self, url: str, **kwargs: Any) -> convmem.Memory:
        """Through a connection that checks every statement for Citus routing."""
        from convmem.store.postgres import PostgresStore
        from tests.store.citus_routing import RoutingConnection

        store = PostgresStore(url, connection_class=RoutingConnection)
        return convmem.Memory(store, kwargs.pop("config", None), **kwargs)

    def after_test(self) -> None:
        """Every statement the test sent could be routed to one shard (README, "Scaling out")."""
        from tests.store.citus_routing import RoutingConnection

        found = list(RoutingConnection.unroutable)
        RoutingConnection.unroutable.clear()
        assert found == [], "statements Citus could not route to one shard:\n" + "\n".join(
            sorted(set(found))
        )
