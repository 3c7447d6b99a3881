"""Pipeline metrics: real requests through the service move prometheus_client's series by the
right amounts, each app has its own registry, and no content or id reaches a label."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

import convmem
from convmem.context.assemble import SECTION_ORDER
from convmem.service import create_app
from convmem.summarize.extractive import VERSION as EXTRACTIVE_VERSION

from .conftest import Keys, auth

MARKER = "Zanzibar-7731"  # content that must never reach /metrics
PET = "Quillon-5523"  # nor this, in a memory the assembled messages do not mention


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, keyed by name and sorted labels (parsed, not grepped)."""
    response = client.get("/metrics")
    assert response.status_code == 200
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float:  # fmt: skip
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_assemblies_are_counted_with_tokens_per_section_and_no_content(
    client: TestClient, keys: Keys
) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    base = f"/v1/conversations/{cid}"
    for turn in range(30):  # enough turns that a small window evicts some
        role = "user" if turn % 2 == 0 else "assistant"
        content = f"{MARKER} turn {turn}: " + "the quick brown fox jumps " * 8
        client.post(f"{base}/messages", json={"role": role, "content": content}, headers=h)
    client.post("/v1/memories", json={"text": "I prefer aisle seats."}, headers=h)
    client.post("/v1/memories", json={"text": f"My cat is called {PET}."}, headers=h)
    client.post(f"{base}/pins", json={"text": f"Answer briefly, {MARKER}."}, headers=h)
    before = scrape(client)

    body = {
        "user_message": f"Which seat do I like, {MARKER}?",
        "model": {"context_window": 1024, "max_output": 200, "tokenizer": "cl100k_base"},
        "system": "You are a travel assistant.",
    }
    reports = []
    for _ in range(2):
        response = client.post(f"{base}/assemble", json=body, headers=h)
        assert response.status_code == 200, response.text
        reports.append(response.json()["report"])
    after = scrape(client)
    text = client.get("/metrics").text

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    source = reports[0]["summary_source"] or "none"
    assert reports[0]["evicted_count"] > 0  # the window was too small for the 30 turns
    assert moved("convmem_assemblies_total", summary_source=source) >= 1
    assert sum(moved("convmem_assemblies_total", summary_source=s)
               for s in ("none", "stored", "built", "ancestor")) == 2  # fmt: skip
    assert moved("convmem_request_tokens_count") == 2
    assert moved("convmem_request_tokens_sum") == sum(r["total_tokens"] for r in reports)
    for section in SECTION_ORDER:
        assert moved("convmem_request_section_tokens_sum", section=section) == sum(
            r["sections"][section] for r in reports
        ), section
    assert moved("convmem_request_section_tokens_sum", section="pinned") > 0
    assert moved("convmem_request_evicted_messages_sum") == sum(r["evicted_count"] for r in reports)
    assert moved("convmem_request_selected_memories_sum") == sum(
        len(r["memory_ids"]) for r in reports
    )
    assert moved("convmem_request_retrieved_messages_sum") == sum(
        len(r["retrieved_ids"]) for r in reports
    )
    assert moved("convmem_request_stubbed_messages_total") == sum(
        len(r["stubbed_ids"]) for r in reports
    )
    route = "/v1/conversations/{conversation_id}/assemble"
    assert moved("convmem_http_requests_total", method="POST", route=route, status="200") == 2
    # recall: candidates before selection, and the recalled memories the message shares no
    # search term with (the cat; the seat memory's subject is "seat")
    assert (
        moved("convmem_request_candidate_memories_sum")
        == sum(r["memory_candidates"] for r in reports)
        == 4
    )
    assert (
        moved("convmem_request_irrelevant_memories_sum")
        == sum(len(r["irrelevant_memory_ids"]) for r in reports)
        == 2
    )
    assert moved("convmem_recall_expired_selected_total") == 0
    # the service records each request it assembles: the second is estimated against the first
    assert reports[0]["cached_tokens"] == 0 < reports[1]["cached_tokens"]
    assert moved("convmem_request_cached_tokens_sum") == sum(r["cached_tokens"] for r in reports)
    assert moved("convmem_request_cached_share_count") == 2
    assert moved("convmem_request_cached_share_sum") == pytest.approx(
        sum(r["cached_share"] for r in reports)
    )
    summarised = [r for r in reports if r["summary_id"] is not None]
    assert moved("convmem_request_summary_age_seconds_count") == len(summarised)
    assert moved("convmem_request_summaries_total", version=EXTRACTIVE_VERSION) == len(summarised)

    # no content, no ids, no principal in any label or value
    for secret in (MARKER, PET, "aisle", cid, "alice", "acme", *reports[0]["evicted_ids"]):
        assert secret not in text, secret
    labels = {key for (_, pairs) in after for key, _ in pairs}
    # every label is an enumerated code; none names a principal, a conversation or a message
    # ("outcome": how the session tier answered, one of SESSION_OUTCOMES)
    assert labels <= {"method", "route", "status", "le", "section", "summary_source", "action",
                      "reason", "kind", "version", "part", "outcome"}  # fmt: skip
    for digest in reports[1]["prefix_digests"]:  # nor the digests of the request's parts
        assert digest not in text


def test_each_app_has_its_own_registry(memory: convmem.Memory, keys: Keys) -> None:
    first, second = create_app(memory), create_app(memory)  # no duplicate-timeseries error
    with TestClient(first) as one, TestClient(second) as two:
        one.get("/healthz")
        one.get("/healthz")
        two.get("/healthz")
        a = value(scrape(one), "convmem_http_requests_total", method="GET", route="/healthz",
                  status="200")  # fmt: skip
        b = value(scrape(two), "convmem_http_requests_total", method="GET", route="/healthz",
                  status="200")  # fmt: skip
    assert (a, b) == (2, 1)


def test_memory_operations_and_denials_are_counted_by_code_never_by_content(
    client: TestClient, keys: Keys
) -> None:
    alice, bob = auth(keys.alice), auth(keys.bob)
    before = scrape(client)

    def remember(text: str, **fields: str) -> Any:
        return client.post("/v1/memories", json={"text": text, **fields}, headers=alice).json()

    aisle = remember(f"I prefer aisle seats, {MARKER}.", subject="seat")
    window = remember("I prefer window seats.", subject="seat")
    assert [s["id"] for s in window["superseded"]] == [aisle["memory"]["id"]]
    blocked = remember("My API key is sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI")
    assert blocked["code"] == "never_store" and blocked["reason"] == "credential"
    proposals = [
        client.post("/v1/memories/proposals", json={"text": text}, headers=alice).json()
        for text in ("I drink green tea.", "I collect stamps.")
    ]
    first, second = (p["memory"]["id"] for p in proposals)
    assert client.post(f"/v1/memories/{first}/confirm", headers=alice).status_code == 200
    assert client.post(f"/v1/memories/{second}/reject", headers=alice).status_code == 200
    corrected = client.patch(
        f"/v1/memories/{first}", json={"text": "I drink black tea."}, headers=alice
    ).json()
    assert corrected["status"] == "saved"
    restored = client.post(f"/v1/memories/{aisle['memory']['id']}/restore", headers=alice)
    assert restored.status_code == 200
    deleted = client.delete(f"/v1/memories/{corrected['memory']['id']}", headers=alice).json()
    # bob asks for alice's memory: the same 404 as for a missing one
    assert client.get(f"/v1/memories/{aisle['memory']['id']}", headers=bob).status_code == 404
    assert client.get("/v1/memories/mem_missing", headers=bob).status_code == 404
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # saves: aisle, window, and the correction's new record
    assert moved("convmem_memory_notices_total", status="saved") == 3
    assert moved("convmem_memory_notices_total", status="proposed") == 2
    assert moved("convmem_memory_notices_total", status="blocked") == 1
    assert moved("convmem_memory_blocks_total", reason="credential") == 1
    # window over aisle, and the correction over the confirmed proposal
    assert moved("convmem_memory_supersessions_total") == 2
    assert moved("convmem_memory_changes_total", action="confirmed") == 1
    assert moved("convmem_memory_changes_total", action="rejected") == 1
    assert moved("convmem_memory_changes_total", action="corrected") == 1
    assert moved("convmem_memory_changes_total", action="restored") == 1
    assert moved("convmem_memory_changes_total", action="deleted") == len(deleted["deleted_ids"])
    assert moved("convmem_not_found_total", kind="memory") == 2

    text = client.get("/metrics").text
    for secret in (MARKER, "aisle", "stamps", "sk-proj", "alice", "bob", "acme", first, second):
        assert secret not in text, secret
