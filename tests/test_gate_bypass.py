"""No path around the never-store gate (DESIGN.md principle 13).

The store's methods that keep user-derived text take an ``Admitted`` value, which only
``convmem.memory.gate.admit`` makes. These tests fail when:

- a module of ``src/`` other than the gate makes an ``Admitted`` or names the gate's seal (an AST
  scan; the import-linter contract ``gate-seal`` checks the import as well);
- a write method of the store — the ``WriteTxn`` Protocol's and every backend transaction's —
  is new and not classified: it must take an ``Admitted`` value, or be listed below with the
  reason it keeps no user-derived text;
- a write method takes a value that carries user-derived text (a memory, a summary, a snapshot,
  an entity, a fact, a pin, a tool) without the ``Admitted`` wrapper;
- an ``Admitted`` is made without the seal at run time.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import convmem
from convmem.model.admitted import Admitted
from convmem.store.base import ReadTxn, WriteTxn
from convmem.store.sqlite.store import SQLiteTxn

SRC = Path(convmem.__file__).parent
# the modules that may make an Admitted value or hold the seal
GATE_MODULES = {"memory/gate.py", "model/admitted.py", "model/gate_seal.py"}

# Every write method of the store that keeps user-derived text, and the value it takes.
GATED = {
    "insert_memory": "Admitted[MemoryRecord]",
    "insert_summary": "Admitted[SummaryRecord]",
    "put_entity": "Admitted[EntityRow]",
    "add_entity_name_sources": "Admitted[EntityRow]",
    "add_entity_facts": "Admitted[tuple[EntityFact, ...]]",
    "insert_pinned": "Admitted[PinnedInstruction]",
    "put_tool": "Admitted[RegisteredTool]",
}
# The other write methods, and why what they keep is not user-derived text for the gate.
NOT_DERIVED_TEXT = {
    "insert_conversation": "the conversation record the user made (title, flags): canonical",
    "insert_messages": "messages are the canonical record (principle 1), not derived from one",
    "set_active_leaf": "ids",
    "delete_messages": "deletes",
    "delete_conversation": "deletes",
    "delete_tenant": "deletes (a tenant's erase, through the lineage cascade)",
    "insert_page_session": "a sign-in link's or session's hash, user id and times: a credential",
    "touch_page_session": "a session's last-seen time",
    "end_page_session": "a session's end time",
    "delete_pinned": "deletes",
    "subtree_ids": "reads ids inside the write transaction",
    "set_memory_fields": "status and links; it can blank a memory's text, never set it",
    "delete_memories": "deletes",
    "insert_audit": "the audit holds no content (principle 12)",
    "set_memory_enabled": "a switch",
    "keep_write": "an idempotency key: the caller's key, a digest of the call and the ids stored",
    "forget_kept_writes": "deletes expired idempotency keys",
    "delete_summary": "deletes",
    "enqueue_job": "ids and times",
    "claim_job": "a lease",
    "extend_lease": "a lease",
    "finish_job": "a note of counts, written by convmem",
    "fail_job": "an error code, written by convmem",
    "retry_job": "a status",
    "put_last_assembly": "a report of ids, token counts and digests, never content",
    "set_index_context": "the search index of a message: derived from the canonical message",
    "index_messages": "the search index of messages: derived from the canonical messages",
    "retain_terms": "deletes vocabulary",
    "delete_index_rows_before": "deletes",
    "add_terms": "the search vocabulary of messages: derived from the canonical messages",
    "set_message_vectors": "vectors of messages",
    "set_term_vectors": "vectors of the vocabulary",
    "index_conversation_step": "which index rows an approximate index holds: ids and depths",
    "set_memory_vectors": "vectors of admitted memories",
    "begin_embedder_switch": "an embedder's name and width, an operator's",
    "stage_message_vectors": "vectors of messages (a new embedder's, until its switch)",
    "stage_memory_vectors": "vectors of admitted memories (likewise)",
    "finish_embedder_switch": "moves vectors, deletes the old ones",
    "cancel_embedder_switch": "deletes",
    "insert_api_key": "a key's name and digest, an administrator's",
    "revoke_api_key": "a status",
    "set_tenant_policy": "an administrator's settings",
    "delete_user": "deletes",
    "set_tool_vector": "a vector of an admitted tool",
    "delete_tool": "deletes",
    "delete_entity": "deletes",
    "delete_entity_fact": "deletes",
    "set_entity_fact_status": "a status (the user's confirmation)",
    "delete_user_entities": "deletes",
    "delete_entity_facts_before": "deletes",
    "add_memory_evidence": "message ids",
    "delete_summaries_before": "deletes",
    "delete_audit_before": "deletes",
}
# Values that carry user-derived text: a write method may take them only inside Admitted[...]
TEXT_BEARING = re.compile(
    r"\b(MemoryRecord|SummaryRecord|Snapshot|SnapshotItem|EntityRow|EntityFact|Entity|"
    r"PinnedInstruction|RegisteredTool|ToolSpec)\b"
)
_ADMITTED = re.compile(r"Admitted\[(?:[^\[\]]|\[[^\[\]]*\])*\]")


def _write_methods() -> set[str]:
    reads = {name for name in dir(ReadTxn) if not name.startswith("_")}
    return {name for name in dir(WriteTxn) if not name.startswith("_") and name not in reads}


def _transactions() -> list[type]:
    """The write transaction of every backend."""
    found: list[type] = [SQLiteTxn]
    try:
        from convmem.store.postgres.store import PostgresTxn
    except ImportError:  # pragma: no cover - the postgres extra is a dev dependency
        pytest.skip("the postgres extra is not installed")
    found.append(PostgresTxn)
    return found


def _annotations(owner: type, method: str) -> dict[str, str]:
    signature = inspect.signature(getattr(owner, method))
    return {
        name: str(parameter.annotation)
        for name, parameter in signature.parameters.items()
        if name != "self"
    }


def test_every_write_method_of_the_store_is_classified() -> None:
    writes = _write_methods()
    unclassified = writes - GATED.keys() - NOT_DERIVED_TEXT.keys()
    assert not unclassified, (
        f"new store write methods {sorted(unclassified)}: take an Admitted value "
        "(convmem.memory.gate.admit) or list them in NOT_DERIVED_TEXT with the reason"
    )
    assert GATED.keys() | NOT_DERIVED_TEXT.keys() <= writes  # the lists name real methods


@pytest.mark.parametrize("owner", ["protocol", "sqlite", "postgresql"])
def test_text_writing_methods_take_only_admitted_values(owner: str) -> None:
    classes: list[type] = [WriteTxn] if owner == "protocol" else []
    if owner != "protocol":
        classes = [t for t in _transactions() if (owner == "sqlite") == (t is SQLiteTxn)]
    for cls in classes:
        for method in sorted(_write_methods()):
            annotations = _annotations(cls, method)
            if method in GATED:
                assert GATED[method] in annotations.values(), (cls.__name__, method)
            for name, annotation in annotations.items():
                bare = _ADMITTED.sub("", annotation)
                assert not TEXT_BEARING.search(bare), (
                    f"{cls.__name__}.{method}({name}: {annotation}) takes user-derived text "
                    "around the never-store gate: wrap it in Admitted[...]"
                )


def _bypasses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "Admitted":
                found.append(f"line {node.lineno}: makes an Admitted value")
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name == "GATE_SEAL":
                found.append(f"line {node.lineno}: names the gate's seal")
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("gate_seal"):
            found.append(f"line {node.lineno}: imports the gate's seal")
        if isinstance(node, ast.ImportFrom) and any(a.name == "GATE_SEAL" for a in node.names):
            found.append(f"line {node.lineno}: imports the gate's seal")
        if isinstance(node, ast.Import) and any(a.name.endswith("gate_seal") for a in node.names):
            found.append(f"line {node.lineno}: imports the gate's seal")
    return found


def test_only_the_gate_makes_admitted_values() -> None:
    modules = sorted(SRC.rglob("*.py"))
    assert len(modules) > 100  # the scan sees the package
    offenders = {
        str(path.relative_to(SRC)): found
        for path in modules
        if str(path.relative_to(SRC)) not in GATE_MODULES and (found := _bypasses(path))
    }
    assert offenders == {}, f"paths around the never-store gate: {offenders}"


def test_the_scan_finds_a_bypass(tmp_path: Path) -> None:
    """The scan is not vacuous: each way of going around the gate is found."""
    bypass = tmp_path / "bypass.py"
    bypass.write_text(
        "from convmem.model.admitted import Admitted\n"
        "from convmem.model.gate_seal import GATE_SEAL\n"
        "def sneak(tx, record):\n"
        "    tx.insert_memory('acme', Admitted(record, GATE_SEAL))\n",
        encoding="utf-8",
    )
    assert len(_bypasses(bypass)) == 4  # the import, the call, the seal named twice


def test_an_admitted_value_needs_the_seal() -> None:
    with pytest.raises(TypeError):
        Admitted("My password is Falcon!9921", object())
