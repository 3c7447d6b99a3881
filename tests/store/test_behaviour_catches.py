"""The behaviour suite catches deliberately broken builds, on every backend.

Each test breaks one behaviour with a monkeypatch (a vector left behind, a renderer that drops
the quoting of speaker names, the never-store policy off, a serving path that crashes) and
asserts that the suite names exactly the cases that exercise it — and, where today's code still
has the defect (issue 30: the lineage, renderer and gate work fixes it), that a build mended by a
monkeypatch passes those same cases, so the suite's verdict follows the behaviour and not the
sample. The suite's result never quotes stored text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.content import blocks
from convmem.eval import behaviour
from tests.store.backends import Backend

VECTOR_CASES = (
    "deletion-vector-memory-delete", "deletion-vector-reject", "deletion-vector-forget",
    "deletion-vector-delete-all",
)  # fmt: skip
NAME_CASES = tuple(
    f"injection-name-{k}" for k in ("close-tag", "role-line", "open-tag", "quote-break", "bidi")
)
NEVER_STORE_CONTROLS = (
    "never_store-plain-password", "never_store-plain-card", "never_store-plain-health",
    "never_store-plain-api-key",
)  # fmt: skip
# the secrets of the wrapped, disguised and paraphrased cases (what a mended gate refuses)
DISGUISED = {
    "never_store-json-escaped-es": "tulip-rain-44", "never_store-json-escaped-en": "Heron-5520",
    "never_store-markdown-bold": "Quartz-7781", "never_store-trailing-period": "4 8 1 9",
    "never_store-leetspeak-password": "ember-3391", "never_store-url-encoded": "Lantern-6620",
    "never_store-tr-credential": "Kartal-4471", "never_store-paraphrase-bank": "Falcon!9921",
    "never_store-paraphrase-gmail": "tulip-rain-44",
    "never_store-paraphrase-remember": "Falcon!9921",
}  # fmt: skip


def cases(ids: Sequence[str]) -> list[behaviour.Case]:
    by_id = {case.id: case for case in behaviour.load()}
    return [by_id[i] for i in ids]


def failed(result: dict[str, Any]) -> dict[str, list[str]]:
    return {f["case"]: f["problems"] for row in result["kinds"].values() for f in row["failures"]}


@pytest.fixture
def hashed(backend: Backend) -> Iterator[convmem.Memory]:
    with backend.open(embedder=convmem.HashingEmbedder()) as mem:
        yield mem


def run(memory: convmem.Memory, ids: Sequence[str]) -> dict[str, Any]:
    return behaviour.run_suite(behaviour.EngineDriver(memory), cases(ids))


# --- a vector left behind ---------------------------------------------------------------------


def _keep_vectors(monkeypatch: pytest.MonkeyPatch, backend: Backend) -> None:
    """The broken build: deleting or erasing a memory leaves its vector row (put back after the
    store's own delete; on PostgreSQL a foreign key keeps a deleted memory's row from staying,
    so there only an erased one's does)."""
    if backend.name == "sqlite":
        from convmem.store.sqlite.memories import MemoryTxnMixin as Mixin

        put_back = ("INSERT OR IGNORE INTO memory_vectors (tenant_id, memory_id, user_id, "
                    "embedder, vector) VALUES (?, ?, ?, ?, ?)")  # fmt: skip
        select = "SELECT tenant_id, memory_id, user_id, embedder, vector FROM memory_vectors "
        select += "WHERE tenant_id = ?"
    else:
        from convmem.store.postgres.memories import MemoryTxnMixin as Mixin  # type: ignore[assignment]

        put_back = ("INSERT INTO memory_vectors (tenant_id, memory_id, user_id, embedder, "
                    "vector) SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM memories "
                    "WHERE tenant_id = %s AND id = %s) ON CONFLICT DO NOTHING")  # fmt: skip
        select = "SELECT tenant_id, memory_id, user_id, embedder, vector FROM memory_vectors "
        select += "WHERE tenant_id = %s"
    for name in ("delete_memories", "set_memory_fields"):
        real = getattr(Mixin, name)

        def leaky(self: Any, tenant: str, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            rows = self._db.execute(select, (tenant,)).fetchall()
            done = _real(self, tenant, *args, **kwargs)
            for row in rows:
                params = tuple(row) if backend.name == "sqlite" else (*row, row[0], row[1])
                self._db.execute(put_back, params)
            return done

        monkeypatch.setattr(Mixin, name, leaky)


def test_a_vector_left_after_a_delete_is_caught(
    hashed: convmem.Memory, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    healthy = run(hashed, VECTOR_CASES)
    assert healthy["failed"] == 0, healthy["kinds"]["deletion"]["failures"]

    _keep_vectors(monkeypatch, backend)
    result = run(hashed, VECTOR_CASES)
    caught = failed(result)
    expected = {"deletion-vector-reject"} | (
        {"deletion-vector-memory-delete", "deletion-vector-forget"}
        if backend.name == "sqlite" else set()
    )  # fmt: skip
    assert expected <= set(caught), caught
    for problems in caught.values():
        assert any("via memory_vectors (by id)" in p for p in problems), problems
    assert all(p.startswith("check 0: leaked m (mem_") for p in caught["deletion-vector-reject"])
    text = "\n".join(behaviour.table(result))
    assert "FAILED deletion deletion-vector-reject" in text
    assert "typewriters" not in text  # the memory's words never reach the report


def test_without_vectors_the_vector_cases_check_nothing_and_pass(backend: Backend) -> None:
    with backend.open() as plain:  # no embedder: no vector rows to probe, none expected
        assert run(plain, VECTOR_CASES)["failed"] == 0


# --- one crash is one failure -------------------------------------------------------------------


def test_a_crashing_case_is_one_failure_and_the_rest_of_the_table_is_made(
    hashed: convmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serving path that raises an error of no kind the suite knows (a bug, not a refusal)
    fails the cases that use it, naming the check and the error's type; every other case
    is played and the table is whole."""
    ids = ("recall-aisle", "isolation-export-bob", "non_recall-expired",
           "non_recall-temporary-conversation")  # fmt: skip

    def broken(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("export is broken in this build")

    monkeypatch.setattr(convmem.Scope, "export", broken)
    result = run(hashed, ids)
    caught = failed(result)
    assert set(caught) == {"isolation-export-bob"}, caught
    assert caught["isolation-export-bob"] == [
        "check 0: crashed with ZeroDivisionError", "check 1: crashed with ZeroDivisionError",
    ]  # fmt: skip
    assert (result["cases"], result["passed"], result["failed"]) == (4, 3, 1)
    lines = behaviour.table(result)
    assert lines[0].split() == ["kind", "cases", "passed", "failed"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1 : len(result["kinds"]) + 2]}
    assert rows["all"] == ["4", "3", "1"] and rows["isolation"] == ["1", "0", "1"]
    assert any(line.startswith("FAILED isolation isolation-export-bob") for line in lines)
    assert "export is broken" not in "\n".join(lines)  # the error's type, not its message

    def crash_in_a_step(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise KeyError("remember")

    monkeypatch.setattr(behaviour.EngineDriver, "remember", crash_in_a_step)
    result = run(hashed, ("recall-aisle", "non_recall-temporary-conversation"))
    assert failed(result)["recall-aisle"] == ["step 0 (remember): crashed with KeyError"]
    assert result["cases"] == 2


def test_the_command_prints_the_table_when_a_case_crashes(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "sqlite":
        pytest.skip("the command's handling is the same on every backend")
    backend.open().close()

    def broken(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError

    monkeypatch.setattr(convmem.Scope, "export", broken)
    args = ["eval", "behaviour", "--db", backend.url, "--case", "recall-aisle",
            "--case", "isolation-export-bob", "--case", "non_recall-expired"]  # fmt: skip
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 1, ran.output
    assert ran.exception is None or isinstance(ran.exception, SystemExit)
    assert "FAILED isolation isolation-export-bob" in ran.output
    assert "crashed with ZeroDivisionError" in ran.output
    totals = next(line for line in ran.output.splitlines() if line.startswith("all "))
    assert totals.split() == ["all", "3", "2", "1"]


# --- hostile speaker names ----------------------------------------------------------------------


def test_a_renderer_that_leaves_names_raw_is_caught(
    memory: convmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Broken: the renderer shows a name as the caller sent it. Mended (the real renderer): the
    name is quoted like every other caller string. The suite fails every name case on the first
    and passes them all on the second."""
    with monkeypatch.context() as broken_build:
        broken_build.setattr(blocks, "quote_name", lambda name: name)
        broken = failed(run(memory, NAME_CASES))
    assert set(broken) == set(NAME_CASES), broken
    for problems in broken.values():
        assert any("outside a labelled block" in p or "a block tag added" in p for p in problems)

    mended = run(memory, (*NAME_CASES, "injection-retrieved-role", "injection-memory-close-tag"))
    assert failed(mended) == {}


# --- never-store: the policy off, and a gate that sees through wrapping -------------------------


def test_a_build_without_the_never_store_policy_is_caught(
    memory: convmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from convmem.memory import gate
    from convmem.memory.policy import PolicyDecision

    healthy = run(memory, NEVER_STORE_CONTROLS)
    assert healthy["failed"] == 0, failed(healthy)

    # the gate's content check off: every text, and every turn a text cites, passes
    monkeypatch.setattr(
        gate, "_text_decision", lambda text, waive=frozenset(): PolicyDecision(True, None, "off")
    )
    result = run(memory, [*NEVER_STORE_CONTROLS, *DISGUISED])
    caught = failed(result)
    assert set(caught) == {*NEVER_STORE_CONTROLS, *DISGUISED}
    for problems in caught.values():
        assert any(": stored as mem_" in p and "not refused" in p for p in problems), problems
    text = "\n".join(behaviour.table(result))
    assert "Falcon" not in text and "4111" not in text


def test_the_gate_refuses_wrapped_and_paraphrased_secrets(memory: convmem.Memory) -> None:
    """The gate (issue 30, item 1) reads through wrapping and judges the turns a text cites:
    the suite passes exactly these cases with it, as the build above without it fails them."""
    result = run(memory, [*NEVER_STORE_CONTROLS, *DISGUISED])
    assert failed(result) == {}
    assert json.dumps(result).count("never_store") >= 1
