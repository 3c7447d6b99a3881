"""A declined proposal keeps its id, status and audit entry, and loses what it said."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import convmem


def _rows_mentioning(db_path: Path, word: str) -> list[str]:
    """Every table whose rows carry ``word`` in any text column (FTS shadow tables included)."""
    db = sqlite3.connect(db_path)
    try:
        hits = []
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                if any(isinstance(v, str) and word in v.lower() for v in row):
                    hits.append(table)
                    break
        return hits
    finally:
        db.close()


def test_rejecting_a_proposal_removes_its_text(alice: convmem.Scope, db_path: Path) -> None:
    proposal = alice.propose("I enjoy zanzibarian opera evenings.").memory
    assert proposal is not None
    alice.memories.reject(proposal.id)

    record = alice.memories.get(proposal.id)
    assert record.status == "rejected" and record.id == proposal.id
    assert record.text == "" and record.subject_key == ""
    exported = alice.export()["data"]
    assert "zanzibarian" not in repr(exported["memories"])
    audit = [e for e in exported["audit_events"] if e["object_id"] == proposal.id]
    assert [e["action"] for e in audit][-1] == "memory.rejected"
    assert alice.search_memories("zanzibarian opera") == []
    assert _rows_mentioning(db_path, "zanzibarian") == []


def test_a_proposal_replaced_by_an_edit_keeps_no_text(alice: convmem.Scope) -> None:
    proposal = alice.propose("I enjoy quokkaesque jazz.").memory
    assert proposal is not None
    notice = alice.memories.update(proposal.id, "I enjoy modern jazz.")
    assert notice.memory is not None and notice.memory.text == "I enjoy modern jazz."
    left = [m for m in alice.memories.list(status=None) if m.id == proposal.id]
    assert all(m.status == "rejected" and m.text == "" for m in left)


CARD = "4111 1111 1111 1111"


@pytest.mark.parametrize(
    "field",
    [
        {"subject": CARD},
        {"scope": f"project:{CARD.replace(' ', '')}"},
        {"subject": "my password is Qv7!marmot"},
    ],
)
def test_every_stored_field_passes_the_policy(
    alice: convmem.Scope, db_path: Path, field: dict[str, str]
) -> None:
    notice = alice.remember("I like tea", **field)  # type: ignore[arg-type]
    assert notice.status == "blocked" and notice.reason in ("payment_card", "credential")
    with pytest.raises(convmem.NeverStoreViolation):
        alice.remember("I like tea", strict=True, **field)  # type: ignore[arg-type]
    assert alice.memories.list(status=None) == []
    assert "1111" not in repr(alice.export()["data"]["memories"])
    assert alice.search_memories("tea") == []
    assert _rows_mentioning(db_path, "tea") == []
