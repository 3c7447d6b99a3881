"""``convmem eval behaviour`` on every backend: a sample of the shipped cases passes through the
public surface, and a build with a store filter removed (scope, or purpose) is caught, the
leaking cases named.

The whole suite is long (a few dozen summarised conversations): run it by hand with
``convmem eval behaviour --db …``. Here, each kind plays a few cases of different shapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.eval import behaviour
from convmem.eval.behaviour.cases import KINDS
from tests.store.backends import Backend

SAMPLE = (
    "recall-aisle", "recall-said-de", "recall-project-scope",
    "non_recall-expired", "non_recall-rejected", "non_recall-unconfirmed", "non_recall-superseded",
    "non_recall-other-project", "non_recall-temporary-conversation",
    "isolation-memory-by-id-eve", "isolation-export-bob", "isolation-conversation-search-carol",
    "isolation-similar-meaning-bob", "isolation-delete-other-memory",
    "correction-remember-seat", "correction-update", "correction-summary-database",
    "compaction-orders-kept", "compaction-billing-task-done", "compaction-guess-cache",
    "deletion-memory-delete", "deletion-forget-fr", "deletion-message-delete-summarised",
    "deletion-delete-all", "deletion-retention",
    "injection-memory-close-tag", "injection-tool-tool-json", "injection-summary-ignore",
    "injection-retrieved-role",
    "recall-purpose-task", "recall-purpose-project-only", "non_recall-other-purpose-task",
    "non_recall-other-purpose-similar-meaning", "isolation-page-api-bob",
    "isolation-page-api-carol", "deletion-restore-undo",
    "never_store-plain-password", "never_store-plain-card", "deletion-vector-memory-delete",
    "deletion-vector-reject",
)  # fmt: skip
LEAKS_WITHOUT_SCOPE_FILTER = ("non_recall-other-project", "isolation-project-other-project")
LEAKS_WITHOUT_PURPOSE_FILTER = (
    "non_recall-other-purpose-task", "non_recall-other-purpose-personal",
    "non_recall-other-purpose-project-only", "non_recall-other-purpose-beside-current",
    "non_recall-other-purpose-similar-meaning", "non_recall-other-purpose-ranked",
    "non_recall-no-purpose-declared",
)  # fmt: skip
PURPOSE_CONTROLS = ("recall-aisle", "recall-purpose-task", "recall-purpose-undeclared",
                    "isolation-memory-by-text-bob", "non_recall-rejected")  # fmt: skip


def sample(ids: Sequence[str]) -> list[behaviour.Case]:
    by_id = {case.id: case for case in behaviour.load()}
    return [by_id[i] for i in ids]


@pytest.fixture
def hashed(backend: Backend) -> Iterator[convmem.Memory]:
    """The backend's database with the dependency-free embedder, so the vector path runs."""
    with backend.open(embedder=convmem.HashingEmbedder()) as mem:
        yield mem


def test_the_shipped_file_has_twenty_cases_of_every_kind() -> None:
    cases = behaviour.load()
    for kind in KINDS:
        assert len([c for c in cases if c.kind == kind]) >= 20, kind
    assert {c.kind for c in sample(SAMPLE)} == set(KINDS)


def test_a_sample_of_every_kind_passes(hashed: convmem.Memory) -> None:
    result = behaviour.run_suite(behaviour.EngineDriver(hashed), sample(SAMPLE))
    failures = [f for row in result["kinds"].values() for f in row["failures"]]
    assert failures == []
    assert result["passed"] == len(SAMPLE)
    for kind in KINDS:
        assert result["kinds"][kind]["cases"] >= 2
    # the extractive summaries of the compaction cases keep every literal of their notes
    faithfulness = result["faithfulness"]
    assert faithfulness["notes"] > 0
    assert faithfulness["literals_verbatim_share"] == 1.0
    assert faithfulness["supported_by_sources_share"] == 1.0
    # the run cleaned up after itself: its users hold nothing
    assert "Quasar" not in json.dumps(hashed.scope("x", "alice").export())


def _drop_scope_filter(monkeypatch: pytest.MonkeyPatch, backend: Backend) -> None:
    """The broken build: the store's memory listing ignores the scope it is asked for."""
    if backend.name == "sqlite":
        from convmem.store.sqlite.memories import MemoryTxnMixin as Mixin
    else:
        from convmem.store.postgres.memories import MemoryTxnMixin as Mixin  # type: ignore[assignment]
    real = Mixin.list_memories

    def unscoped(self: Any, tenant: str, user: str, **filters: Any) -> Any:
        filters.pop("scopes", None)
        return real(self, tenant, user, **filters)

    monkeypatch.setattr(Mixin, "list_memories", unscoped)


def _drop_purpose_filter(monkeypatch: pytest.MonkeyPatch, backend: Backend) -> None:
    """The broken build: the store lists and ranks memories of every purpose, whatever the
    request declared (the filter is gone from all three of its memory queries)."""
    if backend.name == "sqlite":
        from convmem.store.sqlite.memories import MemoryTxnMixin as Listing
        from convmem.store.sqlite.ranking import RankingTxnMixin as Ranking
    else:
        from convmem.store.postgres.memories import MemoryTxnMixin as Listing  # type: ignore[assignment]
        from convmem.store.postgres.memory_search import (  # type: ignore[assignment]
            MemorySearchTxnMixin as Ranking,
        )
    for owner, name in ((Listing, "list_memories"), (Ranking, "search_memory_terms"),
                        (Ranking, "nearest_memories")):  # fmt: skip
        real = getattr(owner, name)

        def any_purpose(self: Any, *args: Any, _real: Any = real, **filters: Any) -> Any:
            if "purposes" in filters:
                filters["purposes"] = None
            return _real(self, *args, **filters)

        monkeypatch.setattr(owner, name, any_purpose)


def test_a_store_without_its_purpose_filter_is_caught(
    hashed: convmem.Memory, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = sample([*PURPOSE_CONTROLS, *LEAKS_WITHOUT_PURPOSE_FILTER])
    healthy = behaviour.run_suite(behaviour.EngineDriver(hashed), cases)
    assert healthy["failed"] == 0, healthy["kinds"]

    _drop_purpose_filter(monkeypatch, backend)
    result = behaviour.run_suite(behaviour.EngineDriver(hashed), cases)
    failed = {f["case"]: f["problems"] for row in result["kinds"].values() for f in row["failures"]}
    assert set(failed) == set(LEAKS_WITHOUT_PURPOSE_FILTER)
    assert result["kinds"]["non_recall"]["failed"] == len(LEAKS_WITHOUT_PURPOSE_FILTER)
    for kind in set(KINDS) - {"non_recall"}:
        assert result["kinds"][kind]["failed"] == 0, kind
    for problems in failed.values():
        assert any(": leaked m (mem_" in p for p in problems), problems
    # the vector ranking alone leaks too: a search by similar meaning
    similar = failed["non_recall-other-purpose-similar-meaning"]
    assert any("via memory_search" in p for p in similar)
    text = "\n".join(behaviour.table(result))
    assert "FAILED non_recall non_recall-other-purpose-task" in text
    assert "Elm Street" not in text  # the leaked memory's words never reach the report


def test_a_store_without_its_scope_filter_is_caught(
    hashed: convmem.Memory, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    _drop_scope_filter(monkeypatch, backend)
    cases = sample(["recall-aisle", *LEAKS_WITHOUT_SCOPE_FILTER])
    result = behaviour.run_suite(behaviour.EngineDriver(hashed), cases)
    assert result["failed"] == 2
    failed = {f["case"]: f["problems"] for row in result["kinds"].values() for f in row["failures"]}
    assert set(failed) == set(LEAKS_WITHOUT_SCOPE_FILTER)
    for problems in failed.values():
        leaks = [p for p in problems if p.startswith("check 0: leaked m (mem_")]
        assert any("via assemble" in p for p in leaks)
    text = "\n".join(behaviour.table(result))
    assert "FAILED non_recall non_recall-other-project" in text
    assert "Fridays" not in text  # the leaked memory's words never reach the report


def test_the_command_reports_writes_json_and_a_plot_and_fails_on_a_leak(
    backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "sqlite":
        pytest.skip("the command's options are the same on every backend")
    backend.open().close()  # the command runs on a database that exists
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    args = ["eval", "behaviour", "--db", backend.url, "--json", str(out), "--plot", str(png),
            "--embedder", "hashing", "--case", "recall-aisle", "--kind", "non_recall",
            "--case", "non_recall-other-project", "--case", "non_recall-expired"]  # fmt: skip
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 0, ran.output
    assert "FAILED" not in ran.output
    result = json.loads(out.read_text())
    assert result["kinds"]["non_recall"] == {"cases": 2, "passed": 2, "failed": 0, "failures": []}
    assert png.read_bytes().startswith(b"\x89PNG")

    _drop_scope_filter(monkeypatch, backend)
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 1
    assert "FAILED non_recall non_recall-other-project" in ran.output
    assert "leaked m (mem_" in ran.output


def test_a_sample_of_every_kind_passes_over_the_http_api(hashed: convmem.Memory) -> None:
    from fastapi.testclient import TestClient

    from convmem.eval.behaviour.http import HttpDriver
    from convmem.service import create_app

    with TestClient(create_app(hashed), raise_server_exceptions=False) as client:
        driver = HttpDriver(client, hashed)
        result = behaviour.run_suite(driver, sample(SAMPLE))
    failures = [f for row in result["kinds"].values() for f in row["failures"]]
    assert failures == []
    assert result["surface"] == "http"
    assert result["faithfulness"]["literals_verbatim_share"] == 1.0


def test_over_http_a_store_without_its_scope_filter_is_caught(
    hashed: convmem.Memory, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from convmem.eval.behaviour.http import HttpDriver
    from convmem.service import create_app

    _drop_scope_filter(monkeypatch, backend)
    with TestClient(create_app(hashed), raise_server_exceptions=False) as client:
        driver = HttpDriver(client, hashed)
        result = behaviour.run_suite(driver, sample(LEAKS_WITHOUT_SCOPE_FILTER))
    failed = {f["case"] for row in result["kinds"].values() for f in row["failures"]}
    assert failed == set(LEAKS_WITHOUT_SCOPE_FILTER)
