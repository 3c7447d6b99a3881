"""Citus readiness: every statement the contract suite sends to PostgreSQL is checked as it is
sent (``PostgresHarness.open`` uses ``RoutingConnection``; ``after_test`` fails a test that sent
one Citus could not route to one shard). These tests check the checker itself."""

from __future__ import annotations

import pytest

import convmem
from tests.store.backends import Backend
from tests.store.citus_routing import RoutingConnection, violations

ROUTABLE = [
    ("SELECT id FROM messages m WHERE m.tenant_id = %s AND m.id = %s", ["acme", "m1"]),
    (
        "SELECT i.body FROM message_index i JOIN messages m ON m.tenant_id = i.tenant_id "
        "AND m.id = i.message_id WHERE i.tenant_id = %s",
        ["acme"],
    ),
    ("INSERT INTO memories (tenant_id, id) VALUES (%s, %s) ON CONFLICT DO NOTHING", ["a", "x"]),
    (
        "DELETE FROM term_vectors v WHERE v.tenant_id = %s AND NOT EXISTS (SELECT 1 FROM "
        "conversation_terms t WHERE t.tenant_id = %s AND t.term = v.term)",
        ["acme", "acme"],
    ),
    ("SELECT id FROM jobs WHERE status = %s", ["pending"]),  # the coordinator's queue
    ("SELECT id FROM api_keys WHERE id = %s", ["key_1"]),  # a reference table
]
UNROUTABLE = [
    ("SELECT id FROM messages WHERE id = %s", ["m1"], "messages is not filtered"),
    (
        "SELECT 1 FROM message_index i JOIN messages m ON m.id = i.message_id "
        "WHERE i.tenant_id = %s AND m.tenant_id = %s",
        ["acme", "other"],
        "spans tenants",
    ),
    (
        "SELECT 1 FROM memories WHERE tenant_id = %s OR user_id = %s",
        ["acme", "alice"],
        "memories is not filtered",
    ),
    (
        "DELETE FROM term_vectors v WHERE v.tenant_id = %s AND NOT EXISTS (SELECT 1 FROM "
        "conversation_terms t WHERE t.term = v.term)",
        ["acme"],
        "conversation_terms is not filtered",
    ),
    (
        "INSERT INTO summaries (tenant_id, id) SELECT tenant_id, id FROM messages",
        [],
        "not filtered",
    ),
]


@pytest.mark.parametrize(("sql", "params"), ROUTABLE)
def test_single_tenant_statements_are_routable(sql: str, params: list[str]) -> None:
    assert violations(sql, params) == []


@pytest.mark.parametrize(("sql", "params", "reason"), UNROUTABLE)
def test_statements_across_tenants_are_caught(sql: str, params: list[str], reason: str) -> None:
    found = violations(sql, params)
    assert found and any(reason in f for f in found), found


def test_the_postgresql_harness_checks_what_the_engine_sends(backend: Backend) -> None:
    if backend.name != "postgresql":
        pytest.skip("a PostgreSQL check")
    before = RoutingConnection.checked
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        conv.append("user", "Remember that I prefer aisle seats.")
        assert conv.search("aisle seats")
        conv.assemble("Which seat?")
        alice.export()
        alice.delete_all()
    assert RoutingConnection.checked - before > 30
