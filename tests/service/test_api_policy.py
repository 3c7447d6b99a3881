"""The tenant policy over HTTP: an admin key reads and replaces its own tenant's memory switch
and retention periods per layer; other keys and other tenants are refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth


def test_an_admin_reads_and_sets_the_periods_per_layer(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    admin = auth(keys.acme_admin)
    fresh = client.get("/v1/tenant/policy", headers=admin)
    assert fresh.status_code == 200
    assert fresh.json() == {"tenant": "acme", "memory_disabled": False, "retention_days": None,
                            "retention": dict.fromkeys(convmem.RETENTION_LAYERS),
                            "recall_unconfirmed_entity_facts": False, "sensitive_categories": [],
                            "sensitive_purposes": ["personalization"],
                            "max_pending_proposals": None}  # fmt: skip
    body = {"retention": {"transcripts": 30, "summaries": 7, "audit": 400}}
    put = client.put("/v1/tenant/policy", json=body, headers=admin)
    assert put.status_code == 200
    assert put.json()["retention_days"] == 30
    assert put.json()["retention"]["summaries"] == 7
    assert client.get("/v1/tenant/policy", headers=admin).json() == put.json()
    assert memory.tenant_policy("acme").retention == convmem.RetentionPeriods(
        transcripts=30, summaries=7, audit=400
    )
    # the old body still means what it meant: transcripts only
    old = client.put("/v1/tenant/policy", json={"retention_days": 14}, headers=admin)
    assert old.json()["retention"] == dict.fromkeys(convmem.RETENTION_LAYERS) | {"transcripts": 14}
    # the other tenant's policy is untouched and unreadable with this key
    other = client.get("/v1/tenant/policy", headers=auth(keys.globex_admin))
    assert other.json()["tenant"] == "globex" and other.json()["retention_days"] is None


def test_bad_policies_and_wrong_keys_are_refused_and_write_nothing(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    admin = auth(keys.acme_admin)
    for body in (
        {"retention": {"backups": 3}},
        {"retention": {"summaries": 0}},
        {"retention": {"summaries": "7"}},
        {"retention_days": 30, "retention": {"transcripts": 31}},
        {"recall_unconfirmed_entity_facts": "yes"},
    ):
        refused = client.put("/v1/tenant/policy", json=body, headers=admin)
        assert refused.status_code == 422, body
    assert memory.tenant_policy("acme") == convmem.TenantPolicy("acme")
    for token in (keys.alice, keys.acme_app):
        assert client.get("/v1/tenant/policy", headers=auth(token)).status_code == 403
    assert client.get("/v1/tenant/policy").status_code == 401


def test_the_periods_set_over_http_are_what_a_sweep_applies(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember("I prefer aisle seats.")
    client.put("/v1/tenant/policy", json={"retention": {"memories": 30}},
               headers=auth(keys.acme_admin))  # fmt: skip
    later = datetime.now(UTC) + timedelta(days=31)
    assert memory.sweep_retention(now=later) == {"acme": {"memories": 1}}
    assert alice.memories.list() == []


def test_a_memory_s_evidence_over_http(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    said = alice.create_conversation().append("user", "I prefer aisle seats.")
    (proposal,) = alice.memories.list(status="proposed")
    got = client.get(f"/v1/memories/{proposal.id}/evidence", headers=auth(keys.alice))
    assert got.status_code == 200
    assert got.json() == {"memory_id": proposal.id, "message_ids": [said.id]}
    other = client.get(f"/v1/memories/{proposal.id}/evidence", headers=auth(keys.bob))
    assert other.status_code == 404
