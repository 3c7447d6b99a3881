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


def test_special_categories_and_the_proposal_cap_over_http(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    """Issue 36: an admin opens a special category to explicit requests and caps proposals;
    a user's explicit save of it is kept, marked, and recalled for the named purposes only; a
    proposal carries its confidence and basis, and one past the cap is refused."""
    admin, alice = auth(keys.acme_admin), auth(keys.alice)
    refused = client.post("/v1/memories", json={"text": "I am allergic to peanuts."}, headers=alice)
    assert (refused.status_code, refused.json()["reason"]) == (422, "health")
    bad: tuple[dict[str, object], ...] = (
        {"sensitive_categories": ["payment_card"]},
        {"sensitive_categories": ["credential"]},
        {"sensitive_purposes": ["marketing"]},
        {"max_pending_proposals": 0},
        {"retention": {"proposals": 0}},
    )
    for wrong in bad:
        assert client.put("/v1/tenant/policy", json=wrong, headers=admin).status_code == 422, wrong
    assert memory.tenant_policy("acme") == convmem.TenantPolicy("acme")
    body = {"sensitive_categories": ["health"], "max_pending_proposals": 1,
            "retention": {"proposals": 14}}  # fmt: skip
    put = client.put("/v1/tenant/policy", json=body, headers=admin)
    assert put.status_code == 200
    assert put.json()["sensitive_categories"] == ["health"]
    assert put.json()["sensitive_purposes"] == ["personalization"]
    assert (put.json()["max_pending_proposals"], put.json()["retention"]["proposals"]) == (1, 14)
    kept = client.post("/v1/memories", json={"text": "I am allergic to peanuts."}, headers=alice)
    assert kept.status_code == 201
    record = kept.json()["memory"]
    assert (record["sensitivity"], record["confidence"], record["basis"]) == ("health", None, None)
    found = client.get("/v1/memories/search", params={"q": "peanuts"}, headers=alice).json()
    assert [hit["memory"]["id"] for hit in found] == [record["id"]]
    other = client.get("/v1/memories/search", params={"q": "peanuts", "purpose": "task_automation"},
                       headers=alice)  # fmt: skip
    assert other.status_code == 200 and other.json() == []
    # never proposed, whatever the policy
    guess = client.post("/v1/memories/proposals", json={"text": "I am allergic to kiwis."},
                        headers=alice)  # fmt: skip
    assert (guess.status_code, guess.json()["reason"]) == (422, "health")
    first = client.post("/v1/memories/proposals", json={"text": "Likes jazz", "confidence": 0.7},
                        headers=alice)  # fmt: skip
    assert first.status_code == 201
    made = first.json()["memory"]
    assert (made["confidence"], made["basis"], made["sensitivity"]) == (0.7, "application", "none")
    weaker = client.post("/v1/memories/proposals", json={"text": "Likes opera", "confidence": 0.2},
                         headers=alice)  # fmt: skip
    assert (weaker.status_code, weaker.json()["reason"]) == (422, "proposal_cap")
    beyond = client.post("/v1/memories/proposals", json={"text": "Likes tea", "confidence": 2},
                      headers=alice)  # fmt: skip
    assert beyond.status_code == 422
    listed = client.get("/v1/memories", params={"status": "proposed"}, headers=alice).json()
    assert [(m["text"], m["confidence"]) for m in listed] == [("Likes jazz", 0.7)]
