"""An entity's names go with the last message that said them, on every backend: deleting the only
message that said an alias, or the fuller canonical name, takes it off the entity (which keeps a
name a remaining message said) — through message delete, conversation delete, delete-all and
the entity layer's retention — and no row of any table holds it afterwards; a name a second
message also said stays. The entity page's API, search and the "Mentioned before" block read
the recomputed names."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import convmem
from tests.store.backends import Backend

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _people(scope: convmem.Scope) -> dict[str, set[str]]:
    return {e.name: set(e.aliases) for e in scope.entities.list(limit=500)}


def _anywhere(backend: Backend, word: str) -> bool:
    """``word`` as a whole word (any case) in any row of any table."""
    return re.search(rf"(?<![a-z]){word.lower()}(?![a-z])", backend.dump().lower()) is not None


def _system_texts(ctx: convmem.AssembledContext) -> list[str]:
    return [str(m["content"]) for m in ctx.messages if m["role"] == "system"]


def test_deleting_the_only_message_that_said_an_alias_removes_the_alias(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I went hiking with Zephyrine in the hills.", created_at=_at(0))
    said = conv.append("user", "Thanks, Zeph! See you at the lake.", created_at=_at(1))
    assert _people(alice) == {"Zephyrine": {"Zeph"}}
    assert _anywhere(backend, "zeph")  # the probe sees it before
    conv.delete_message(said.id)
    assert _people(alice) == {"Zephyrine": set()}
    (entity,) = alice.entities.list()
    page = alice.entities.get(entity.id)
    assert page.aliases == () and "zeph\"" not in json.dumps(page.to_dict(), default=str).lower()
    assert alice.entities.search("what did zeph say?") == []
    assert [e.name for e in alice.entities.search("Zephyrine")] == ["Zephyrine"]
    assert not _anywhere(backend, "zeph")
    # the "Mentioned before" block of another conversation names the entity by what is left
    ctx = alice.create_conversation().assemble("How was the hike with Zephyrine?")
    (block,) = [t for t in _system_texts(ctx) if "Mentioned before" in t]
    assert "Zephyrine" in block and not re.search(r"(?i)\bzeph\b", block)


def test_deleting_the_message_that_said_the_canonical_name_falls_back_to_a_name_still_said(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I had coffee with Quillon yesterday.", created_at=_at(0))
    full = conv.append("user", "My friend Quillon Marbury paints landscapes.", created_at=_at(1))
    assert list(_people(alice)) == ["Quillon Marbury"]
    conv.delete_message(full.id)
    assert _people(alice) == {"Quillon": set()}
    (entity,) = alice.entities.list()
    page = alice.entities.get(entity.id)
    assert page.name == "Quillon" and page.mention_count == 1
    assert not _anywhere(backend, "marbury")


def test_a_name_two_messages_said_stays_until_both_are_deleted(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I went hiking with Zephyrine in the hills.", created_at=_at(0))
    first = conv.append("user", "Thanks, Zeph! See you at the lake.", created_at=_at(1))
    second = conv.append("user", "Zeph brought the map again.", created_at=_at(2))
    conv.delete_message(second.id)  # the later one: deleting a turn deletes the turns after it
    assert _people(alice) == {"Zephyrine": {"Zeph"}}
    assert [e.name for e in alice.entities.search("where is zeph?")] == ["Zephyrine"]
    conv.delete_message(first.id)
    assert _people(alice) == {"Zephyrine": set()}
    assert not _anywhere(backend, "zeph")


def test_deleting_a_conversation_removes_the_names_only_it_said(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    kept = alice.create_conversation()
    kept.append("user", "I had coffee with Quillon yesterday.", created_at=_at(0))
    doomed = alice.create_conversation()
    doomed.append("user", "My friend Quillon Marbury paints landscapes.", created_at=_at(1))
    doomed.append("user", "Quill said the frames are ready.", created_at=_at(2))
    people = _people(alice)
    assert list(people) == ["Quillon Marbury"] and "Quill" in people["Quillon Marbury"]
    doomed.delete()
    assert _people(alice) == {"Quillon": set()}
    assert not _anywhere(backend, "marbury") and not _anywhere(backend, "quill")
    # and a project conversation's entity keeps the same rule in its own scope
    project = alice.create_conversation(metadata={"project": "p1"})
    project.append("user", "My friend Quillon Marbury paints landscapes.", created_at=_at(3))
    project.delete()
    assert not _anywhere(backend, "marbury")


def test_delete_all_leaves_no_name_behind(backend: Backend, memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I went hiking with my friend Zephyrine Marbury.", created_at=_at(0))
    conv.append("user", "Thanks, Zeph! See you at the lake.", created_at=_at(1))
    bob = memory.scope("acme", "bob")
    bob.create_conversation().append("user", "I met Quillon at the fair.", created_at=_at(0))
    alice.delete_all()
    assert _people(alice) == {}
    assert not _anywhere(backend, "zeph") and not _anywhere(backend, "zephyrine")
    assert not _anywhere(backend, "marbury")
    assert _people(bob) == {"Quillon": set()}


def test_the_entity_layers_retention_takes_the_names_of_the_facts_it_deletes(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I went hiking with Zephyrine.", created_at=_at(0))
    conv.append("user", "Thanks, Zeph! See you at the lake.", created_at=_at(1))
    now = datetime.now(UTC)
    conv.append("user", "My friend Zephyrine Marbury called today.", created_at=now)
    (aliases,) = _people(alice).values()
    assert {"Zeph", "Zephyrine"} <= aliases
    memory.set_tenant_policy("acme", retention={"entities": 30})
    swept = memory.sweep_retention("acme", now=now + timedelta(days=1))
    assert swept["acme"]["entities"] == 2
    # the facts of the two old turns went; the new turn said the first name, never "Zeph"
    assert _people(alice) == {"Zephyrine Marbury": aliases - {"Zeph"}}  # the messages stay
