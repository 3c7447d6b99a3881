"""The residue matrix (issue 30): for every write path that stores text and every delete path
that is to remove it, a unique marker written that way is gone after the delete.

- **SQLite**: byte level. After the store closes, the raw files (database, ``-wal``, ``-shm``)
  are scanned for the marker (whole, lower-cased, and with the two letters FTS5's prefix
  compression may cut) — index pages, freelists, FTS5 segments and the WAL included.
- **PostgreSQL**: every row of every table, read by SELECT (tsvectors included), must not hold
  it. Bytes on disk are out of reach there: a deleted tuple stays in its heap page until VACUUM
  reuses the space, and in the WAL until it is recycled; that is the server's operator's to
  manage (``VACUUM``, WAL retention), and is documented, not tested.

A pair is in the matrix when the delete path is meant to remove what the write path stored: a
memory the user confirmed survives the deletion of its message on purpose (see
``convmem.store.lineage``), so "remember" is not paired with "message delete". Data that stays
is written before and after, so deleted rows share pages with live ones.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem import ModelProfile
from convmem.testing.contract.test_consolidation import _consolidate
from convmem.testing.harness import Backend

SMALL = ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")
TENANT = "acme"


def _digits_marker() -> str:
    # letters then digits: no stemmer changes it, every tokenizer keeps it as one token
    return "zyxqv" + "".join(secrets.choice("0123456789") for _ in range(8))


def _name_marker() -> str:
    # a capitalised run of letters: read as a person's surname by the entity extractor
    return "Zorv" + "".join(secrets.choice("bcdfghjklmnpqrstvwxz") for _ in range(6))


@dataclass
class Written:
    """What a write path made, for the delete paths to aim at."""

    marker: str
    conversations: list[convmem.Conversation] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # "message delete" deletes these
    memories: list[str] = field(default_factory=list)
    tool: str | None = None


def _alice(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(TENANT, "alice")


# --- write paths ---------------------------------------------------------------------------------


def _append(memory: convmem.Memory) -> Written:
    w = Written(_digits_marker())
    conv = _alice(memory).create_conversation()
    first = conv.append("user", f"note: the secret word is {w.marker} today")
    conv.append("assistant", f"Understood, {w.marker} noted.")
    conv.search(w.marker)
    return Written(w.marker, [conv], [first.id])


def _saved(memory: convmem.Memory, explicit: bool) -> Written:
    """A memory saved through the API: a confirmed one ("remember") or a proposal."""
    marker = _digits_marker()
    alice = _alice(memory)
    said = f"My locker word is {marker}." if explicit else f"I enjoy the {marker} opera."
    record = (alice.remember if explicit else alice.propose)(said).memory
    assert record is not None and record.status == ("confirmed" if explicit else "proposed")
    return Written(marker, memories=[record.id])


def _sensitive(memory: convmem.Memory, in_chat: bool) -> Written:
    """A special category the tenant opened, kept on the user's explicit request (issue 36):
    through the API, or asked for in a turn (which says it too)."""
    marker = _digits_marker()
    memory.set_tenant_policy(TENANT, sensitive_categories=["health"])
    alice = _alice(memory)
    if not in_chat:
        notice = alice.remember(f"I am allergic to {marker} nuts.")
        assert notice.memory is not None and notice.memory.sensitivity == "health"
        return Written(marker, memories=[notice.memory.id])
    conv = alice.create_conversation()
    said = conv.append("user", f"Remember that I am allergic to {marker} nuts.")
    (notice,) = said.notices
    assert notice.memory is not None and notice.memory.sensitivity == "health"
    return Written(marker, [conv], [said.id], [notice.memory.id])


def _heuristic_proposal(memory: convmem.Memory) -> Written:
    marker = _digits_marker()
    conv = _alice(memory).create_conversation()
    said = conv.append("user", f"I prefer window seats near {marker} on long flights.")
    (notice,) = said.notices
    assert notice.status == "proposed" and notice.memory is not None
    return Written(marker, [conv], [said.id], [notice.memory.id])


def _consolidated_proposal(memory: convmem.Memory) -> Written:
    marker = _digits_marker()
    alice = _alice(memory)
    convs = [alice.create_conversation() for _ in range(2)]
    said = [
        convs[0].append("user", f"I love hiking {marker} in the mountains.").id,
        convs[1].append("user", f"I love hiking {marker} in mountains on weekends.").id,
    ]
    _consolidate(memory, alice)
    (proposal,) = [m for m in alice.memories.list(status="proposed") if marker in m.text]
    assert set(alice.memories.evidence(proposal.id)) == set(said)
    return Written(marker, convs, said, [proposal.id])


def _entity_fact(memory: convmem.Memory) -> Written:
    marker = _name_marker()
    alice = _alice(memory)
    conv = alice.create_conversation()
    said = conv.append("user", f"My friend Quillon {marker} paints landscapes.")
    assert any(marker in e.name for e in alice.entities.list())
    return Written(marker, [conv], [said.id])


def _tool(memory: convmem.Memory) -> Written:
    marker = _digits_marker()
    spec = {"name": "lookup", "description": f"Look up a {marker} in the catalogue."}
    memory.tools.register(TENANT, spec, use_when=[f"asks about {marker}"])
    return Written(marker, tool="lookup")


def _content_parts(memory: convmem.Memory) -> Written:
    marker = _digits_marker()
    conv = _alice(memory).create_conversation()
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": "Here is the picture and the form."},
        {"type": "image_url", "image_url": {"url": "https://app.example/u/a.png"},
         "width": 640, "height": 480, "name": f"{marker}.png", "caption": f"a {marker} banner"},
        {"type": "file", "file": {"file_id": "file_1", "filename": f"{marker}-form.pdf"},
         "extracted_text": f"Application form, reference {marker}."},
    ]  # fmt: skip
    said = conv.append("user", parts)
    return Written(marker, [conv], [said.id])


def _summary(memory: convmem.Memory) -> Written:
    marker = _digits_marker()
    conv = _alice(memory).create_conversation()
    first = conv.append(
        "user", f"We decided to name the project {marker}. My goal is to ship {marker} by May."
    )
    conv.append("assistant", f"Understood, {marker} noted.")
    for i in range(30):
        conv.append("user", f"Turn {i}: tell me something nice about rivers and owls.")
        conv.append("assistant", f"Rivers and owls, note {i}: calm company at dusk.")
    conv.assemble("continue", model=SMALL)
    assert any(marker in s.rendered for s in conv.summaries())
    return Written(marker, [conv], [first.id])


WRITES: dict[str, Callable[[convmem.Memory], Written]] = {
    "append": _append,
    "remember": lambda memory: _saved(memory, explicit=True),
    "sensitive remember": lambda memory: _sensitive(memory, in_chat=False),
    "sensitive remember in chat": lambda memory: _sensitive(memory, in_chat=True),
    "heuristic proposal": _heuristic_proposal,
    "api proposal": lambda memory: _saved(memory, explicit=False),
    "consolidated proposal": _consolidated_proposal,
    "entity fact": _entity_fact,
    "tool register": _tool,
    "content parts": _content_parts,
    "summary": _summary,
}


# --- delete paths --------------------------------------------------------------------------------


def _message_delete(memory: convmem.Memory, w: Written) -> None:
    alice = _alice(memory)
    for message_id in w.messages:
        alice.conversation(alice.message(message_id).conversation_id).delete_message(message_id)


def _conversation_delete(memory: convmem.Memory, w: Written) -> None:
    for conv in w.conversations:
        conv.delete()


def _memory_delete(memory: convmem.Memory, w: Written) -> None:
    for memory_id in w.memories:
        _alice(memory).memories.delete(memory_id)


def _declined(memory: convmem.Memory, w: Written) -> None:
    for memory_id in w.memories:
        _alice(memory).memories.reject(memory_id)


def _delete_all(memory: convmem.Memory, w: Written) -> None:
    _alice(memory).delete_all()


def _sweep(memory: convmem.Memory, **periods: int) -> dict[str, int]:
    memory.set_tenant_policy(TENANT, retention=periods)
    later = datetime.now(UTC) + timedelta(days=max(periods.values()) + 1)
    return memory.sweep_retention(TENANT, now=later)[TENANT]


def _retention_transcripts(memory: convmem.Memory, w: Written) -> None:
    assert _sweep(memory, transcripts=30)["transcripts"] >= len(w.conversations)


def _retention_memories(memory: convmem.Memory, w: Written) -> None:
    assert _sweep(memory, memories=30)["memories"] >= len(w.memories)


def _retention_proposals(memory: convmem.Memory, w: Written) -> None:
    assert _sweep(memory, proposals=14)["proposals"] >= len(w.memories)


def _tenant_erase(memory: convmem.Memory, w: Written) -> None:
    assert sum(memory.erase_tenant(TENANT).values()) > 0


def _tool_delete(memory: convmem.Memory, w: Written) -> None:
    assert w.tool is not None
    memory.tools.delete(TENANT, w.tool)


DELETES: dict[str, Callable[[convmem.Memory, Written], None]] = {
    "message delete": _message_delete,
    "conversation delete": _conversation_delete,
    "memory delete": _memory_delete,
    "declined proposal": _declined,
    "delete_all": _delete_all,
    "retention transcripts": _retention_transcripts,
    "retention memories": _retention_memories,
    "retention proposals": _retention_proposals,
    "tool delete": _tool_delete,
    "tenant erase": _tenant_erase,
}

_TRANSCRIPT = ("message delete", "conversation delete", "delete_all", "retention transcripts")
MATRIX: dict[str, tuple[str, ...]] = {
    "append": _TRANSCRIPT,
    "remember": ("memory delete", "delete_all", "retention memories"),
    "sensitive remember": ("memory delete", "delete_all", "retention memories"),
    # the turn that asked says it too, and a kept memory outlives its turn: both go together
    "sensitive remember in chat": ("delete_all",),
    "heuristic proposal": _TRANSCRIPT,  # its turn says it too: the turn is the user's
    "api proposal": (
        "memory delete",
        "declined proposal",
        "delete_all",
        "retention memories",
        "retention proposals",
    ),
    "consolidated proposal": ("message delete", "conversation delete", "delete_all"),
    "entity fact": _TRANSCRIPT,
    "tool register": ("tool delete",),
    "content parts": _TRANSCRIPT,
    "summary": _TRANSCRIPT,
}
MATRIX = {write: (*deletes, "tenant erase") for write, deletes in MATRIX.items()}
PAIRS = [(write, delete) for write, deletes in MATRIX.items() for delete in deletes]


# --- the scans -----------------------------------------------------------------------------------


def _forms(marker: str) -> list[str]:
    """The marker as a scan may find it: whole, lower-cased (tokenizers), and without the two
    first letters (FTS5 stores a term's prefix shared with the one before it once)."""
    return list(dict.fromkeys([marker, marker.lower(), marker.lower()[2:]]))


def sqlite_residue(db_path: Path, marker: str) -> dict[str, list[str]]:
    """Which of the database's files (``-wal``, ``-shm`` too) hold which forms of the marker."""
    found: dict[str, list[str]] = {}
    for path in sorted(db_path.parent.glob(db_path.name + "*")):
        data = path.read_bytes()
        hits = [form for form in _forms(marker) if form.encode() in data]
        if hits:
            found[path.name] = hits
    return found


def _residue(backend: Backend, marker: str) -> object:
    if backend.name == "sqlite":
        return sqlite_residue(Path(backend.url.removeprefix("sqlite:///")), marker)
    dump = backend.dump()
    return [form for form in _forms(marker) if form in dump]


def _keep_other_data(memory: convmem.Memory) -> None:
    """Another user of the tenant, and another tenant (what a tenant's erase keeps)."""
    for tenant, user in ((TENANT, "bob"), ("globex", "carol")):
        other = memory.scope(tenant, user)
        other.remember("I prefer tea over coffee.")
        conv = other.create_conversation()
        for i in range(6):
            conv.append("user", f"{user}'s turn {i} about the garden shed and the tomatoes")
        shed = {"name": f"shed_{secrets.token_hex(3)}", "description": "Find a garden tool."}
        memory.tools.register(tenant, shed)


@contextmanager
def _store(backend: Backend) -> Iterator[convmem.Memory]:
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        yield memory


@pytest.mark.parametrize(("write", "delete"), PAIRS, ids=[f"{w} x {d}" for w, d in PAIRS])
def test_deleted_text_leaves_no_residue(backend: Backend, write: str, delete: str) -> None:
    with _store(backend) as memory:
        _keep_other_data(memory)
        written = WRITES[write](memory)
        _keep_other_data(memory)
        DELETES[delete](memory, written)
        _keep_other_data(memory)
    assert _residue(backend, written.marker) in ({}, [])


@pytest.mark.parametrize("write", list(WRITES))
def test_the_scan_finds_what_was_not_deleted(backend: Backend, write: str) -> None:
    """Each write path's marker is found by the scan while it is stored: the matrix above
    cannot pass by looking in the wrong place."""
    with _store(backend) as memory:
        _keep_other_data(memory)
        written = WRITES[write](memory)
        _keep_other_data(memory)
    assert _residue(backend, written.marker) not in ({}, [])
