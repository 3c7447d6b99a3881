"""Deletion leaves no bytes: a unique marker written through each delete path is gone from every
file the store owns (database, WAL, shared memory) after a checkpoint, FTS5 segments included."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem import ModelProfile
from convmem.service import create_app

SMALL = ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")


def _marker() -> str:
    # letters then digits: no stemmer changes it, and FTS5 keeps it as one token
    return "zyxqv" + "".join(secrets.choice("0123456789") for _ in range(8))


def _keep_other_data(memory: convmem.Memory) -> None:
    """Data that stays, so deleted rows share pages with live ones."""
    bob = memory.scope("acme", "bob")
    bob.remember("I prefer tea over coffee.")
    conv = bob.create_conversation()
    for i in range(6):
        conv.append("user", f"bob's turn {i} about the garden shed and the tomatoes")


def _talk(conv: convmem.Conversation, marker: str, turns: int = 3) -> list[str]:
    ids = []
    for i in range(turns):
        ids.append(conv.append("user", f"note {i}: the secret word is {marker} today").id)
        conv.append("assistant", f"Understood, {marker} noted as item {i}.")
    return ids


def _memory_delete(memory: convmem.Memory, marker: str) -> None:
    alice = memory.scope("acme", "alice")
    record = alice.remember(f"My locker word is {marker}.").memory
    assert record is not None
    alice.memories.delete(record.id)


def _updated_then_deleted(memory: convmem.Memory, marker: str) -> None:
    alice = memory.scope("acme", "alice")
    record = alice.remember(f"My locker word is {marker}.").memory
    assert record is not None
    notice = alice.memories.update(record.id, "My locker word is plain.")
    assert notice.memory is not None
    alice.memories.delete(notice.memory.id)


def _message_delete(memory: convmem.Memory, marker: str) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    conv.append("user", "an unrelated first turn about gardening")
    first = conv.append("user", f"the secret word is {marker}")
    conv.append("assistant", f"Noted: {marker}.")
    conv.search(marker)
    conv.delete_message(first.id)


def _conversation_delete(memory: convmem.Memory, marker: str) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    _talk(conv, marker)
    for i in range(30):
        conv.append("user", f"Turn {i}: tell me something nice about rivers and owls.")
        conv.append("assistant", f"Rivers and owls, note {i}: calm company at dusk.")
    conv.assemble("continue", model=SMALL)  # a rolling summary quotes the marker
    conv.search(marker)
    conv.delete()


def _delete_all(memory: convmem.Memory, marker: str) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember(f"My locker word is {marker}.")
    _talk(alice.create_conversation(), marker)
    alice.delete_all()


def _http_delete_data(memory: convmem.Memory, marker: str) -> None:
    token = memory.keys.create("acme", "user", user="alice").token
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(memory)) as client:
        conv = client.post("/v1/conversations", json={}, headers=headers).json()
        client.post(f"/v1/conversations/{conv['id']}/messages",
                    json={"role": "user", "content": f"the secret word is {marker}"},
                    headers=headers)  # fmt: skip
        client.post("/v1/memories", json={"text": f"My locker word is {marker}."}, headers=headers)
        assert client.delete("/v1/data", headers=headers).status_code == 200


def _proposal_rejected(memory: convmem.Memory, marker: str) -> None:
    alice = memory.scope("acme", "alice")
    proposal = alice.propose(f"I enjoy the {marker} opera.").memory
    assert proposal is not None
    alice.memories.reject(proposal.id)


def _forgotten_by_message(memory: convmem.Memory, marker: str) -> None:
    alice = memory.scope("acme", "alice")
    alice.remember(f"My locker word is {marker}.")
    conv = alice.create_conversation()
    conv.append("user", "Forget that my locker word is anything.")
    # the forget request itself holds no marker; the memory must be gone
    assert not any(marker in m.text for m in alice.memories.list(status=None))


PATHS: dict[str, Callable[[convmem.Memory, str], None]] = {
    "memory delete": _memory_delete,
    "updated then deleted memory": _updated_then_deleted,
    "message delete": _message_delete,
    "conversation delete": _conversation_delete,
    "delete_all": _delete_all,
    "DELETE /v1/data": _http_delete_data,
    "rejected proposal": _proposal_rejected,
    "forgotten by a message": _forgotten_by_message,
}


def _residue(folder: Path, marker: str) -> dict[str, list[str]]:
    """Which files hold which forms of the marker (whole, or with FTS5's shared prefix cut)."""
    forms = [marker, marker[2:]]
    found: dict[str, list[str]] = {}
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        hits = [form for form in forms if form.encode() in data]
        if hits:
            found[path.name] = hits
    return found


def _fold_the_wal_in(db_path: Path) -> None:
    """Checkpoint the WAL into the database file and empty it, as a closed store leaves it."""
    db = sqlite3.connect(db_path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


@pytest.mark.parametrize("path", list(PATHS))
def test_deleted_text_leaves_no_bytes(tmp_path: Path, path: str) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    db_path = folder / "convmem.db"
    marker = _marker()
    with convmem.open(db_path) as memory:
        _keep_other_data(memory)
        PATHS[path](memory, marker)
        _keep_other_data(memory)
    _fold_the_wal_in(db_path)
    assert _residue(folder, marker) == {}


def test_the_scan_finds_text_that_was_not_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    marker = _marker()
    with convmem.open(folder / "convmem.db") as memory:
        alice = memory.scope("acme", "alice")
        alice.remember(f"My locker word is {marker}.")
        _talk(alice.create_conversation(), marker)
    assert "convmem.db" in _residue(folder, marker)


def _surname() -> str:
    # a capitalised run of letters no stemmer or tokenizer splits: read as a person's surname
    return "Zorv" + "".join(secrets.choice("bcdfghjklmnpqrstvwxz") for _ in range(6))


@pytest.mark.parametrize("whole", [False, True], ids=["message delete", "conversation delete"])
def test_a_deleted_entity_name_leaves_no_bytes(tmp_path: Path, whole: bool) -> None:
    """The fuller name only a deleted message said is gone from the entity (which keeps the
    first name a remaining message said) and from every file, indexes and WAL included."""
    folder = tmp_path / "store"
    folder.mkdir()
    db_path = folder / "convmem.db"
    surname = _surname()
    with convmem.open(db_path) as memory:
        _keep_other_data(memory)
        alice = memory.scope("acme", "alice")
        alice.create_conversation().append("user", "I had coffee with Quillon yesterday.")
        conv = alice.create_conversation()
        conv.append("user", "An unrelated first turn about gardening.")
        said = conv.append("user", f"My friend Quillon {surname} paints landscapes.")
        assert [e.name for e in alice.entities.list()] == [f"Quillon {surname}"]
        conv.search(surname)
        if whole:
            conv.delete()
        else:
            conv.delete_message(said.id)
        assert [e.name for e in alice.entities.list()] == ["Quillon"]
        _keep_other_data(memory)
    _fold_the_wal_in(db_path)
    for form in (surname, surname.lower()):
        assert _residue(folder, form) == {}
