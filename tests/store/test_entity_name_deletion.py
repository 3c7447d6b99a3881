"""An entity's names go with the last message that said them, on every backend: deleting the only
message that said an alias, or the fuller canonical name, takes it off the entity (which keeps a
name a remaining message said) — through message delete, conversation delete, delete-all and
the entity layer's retention — and no row of any table holds it afterwards; a name a second
message also said stays. The entity page's API, search and the "Mentioned before" block read
the recomputed names."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

import convmem
from convmem.service import create_app
from convmem.store.entity_sources import says
from tests.store.backends import Backend, SQLiteHarness

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _people(scope: convmem.Scope) -> dict[str, set[str]]:
    return {e.name: set(e.aliases) for e in scope.entities.list(limit=500)}


def _says(text: str, word: str) -> bool:
    """``word`` as a whole word, in any case."""
    return re.search(rf"(?<![a-z]){word.lower()}(?![a-z])", text.lower()) is not None


def _anywhere(backend: Backend, word: str) -> bool:
    """``word`` in any row of any table."""
    return _says(backend.dump(), word)


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
    assert page.aliases == () and not _says(json.dumps(page.to_dict(), default=str), "zeph")
    token = memory.keys.create("acme", "user", user="alice").token
    with TestClient(create_app(memory)) as client:
        headers = {"Authorization": f"Bearer {token}"}
        listed = client.get("/v1/entities", headers=headers)
        shown = client.get(f"/v1/entities/{entity.id}", headers=headers)
    assert listed.status_code == shown.status_code == 200
    assert "Zephyrine" in listed.text and "Zephyrine" in shown.text
    assert not _says(listed.text, "zeph") and not _says(shown.text, "zeph")
    assert alice.entities.search("what did zeph say?") == []
    assert [e.name for e in alice.entities.search("Zephyrine")] == ["Zephyrine"]
    assert not _anywhere(backend, "zeph")
    # the "Mentioned before" block of another conversation names the entity by what is left
    for fact in alice.entities.get(entity.id).facts:  # (recalled there once confirmed)
        alice.entities.confirm(entity.id, fact.id)
    ctx = alice.create_conversation().assemble("How was the hike with Zephyrine?")
    (block,) = [t for t in _system_texts(ctx) if "Mentioned before" in t]
    assert "Zephyrine" in block and not _says(block, "zeph")


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


def _as_before_sources(backend: Backend, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Run ``statements`` (``?`` placeholders) on the raw database, then take it back to the
    schema before names had sources: the table dropped, its migration unrecorded."""
    migration = {"sqlite": "m064_entity_name_sources", "postgresql": "m019_entity_name_sources"}
    statements = [
        *statements,
        ("DROP TABLE entity_name_sources", ()),
        ("DELETE FROM _migrations WHERE name = ?", (migration[backend.name],)),
    ]
    if backend.name == "sqlite":
        with closing(sqlite3.connect(SQLiteHarness.path(backend.url))) as db, db:
            for sql, params in statements:
                db.execute(sql, params)
    else:
        import psycopg

        with psycopg.connect(backend.url, autocommit=True) as pg:
            for sql, params in statements:
                pg.execute(sql.replace("?", "%s"), params)


def test_the_migration_leaves_no_name_that_no_remaining_message_says(backend: Backend) -> None:
    """A database from before names had sources, holding what the old deletes left behind (an
    alias and a canonical name only deleted messages said): after migrating, both are gone,
    the names remaining messages say stay, and they go with their messages from then on."""
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        alice.create_conversation().append("user", "I went hiking with Zephyrine.")
        zeph = alice.create_conversation()
        zeph.append("user", "Thanks, Zeph! See you at the lake.")
        alice.create_conversation().append("user", "I had coffee with Quillon yesterday.")
        doomed = alice.create_conversation()
        doomed.append("user", "My friend Quillon Marbury paints landscapes.")
        bob = memory.scope("acme", "bob")
        bob.create_conversation().append("user", "My friend Quillon Marbury paints landscapes.")
        people = {e.name: e.id for e in alice.entities.list()}
        assert set(people) == {"Zephyrine", "Quillon Marbury"}
        doomed.delete()
        assert set(_people(alice)) == {"Zephyrine", "Quillon"}
    quillon, zephyrine = people["Quillon Marbury"], people["Zephyrine"]
    # what the old delete of a conversation that alone said "Marbury" (and "Mel") left behind
    _as_before_sources(backend, [
        ("UPDATE entities SET name = ? WHERE tenant_id = ? AND id = ?",
         ("Quillon Marbury", "acme", quillon)),
        ("INSERT INTO entity_names (tenant_id, entity_id, key, user_id, scope, alias) "
         "VALUES (?, ?, ?, ?, ?, ?)", ("acme", quillon, "quillon marbury", "alice", "user",
                                        "Quillon Marbury")),
        ("INSERT INTO entity_names (tenant_id, entity_id, key, user_id, scope, alias) "
         "VALUES (?, ?, ?, ?, ?, ?)", ("acme", zephyrine, "mel", "alice", "user", "Mel")),
    ])  # fmt: skip
    assert _anywhere(backend, "mel")  # the probe sees the stale names before
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        assert _people(alice) == {"Zephyrine": {"Zeph"}, "Quillon": set()}
        assert not _anywhere(backend, "mel")
        marbury = [e.name for e in memory.scope("acme", "bob").entities.list()]
        assert marbury == ["Quillon Marbury"]  # bob's conversation still says it
        # the names kept were attributed to their messages: they go with them
        alice.conversation(zeph.id).delete()
        assert _people(alice) == {"Zephyrine": set(), "Quillon": set()}
        memory.scope("acme", "bob").delete_all()
        assert not _anywhere(backend, "marbury") and not _anywhere(backend, "zeph")


def test_a_name_is_said_only_as_a_whole_word_in_any_case_or_script() -> None:
    assert not says("Melanie went hiking.", "Mel")
    assert says("Thanks, mel!", "Mel") and says("Caroline's cat", "Caroline")
    assert says("Ça va, Zoë ?", "ZOË")
    # without word breaks a name cannot be told from part of a word: the migration does not
    # attribute it (it may drop a name, never keep one a deleted message said)
    assert not says("我和王芳去了", "王芳")
    assert says("Привет, Маша!", "маша") and not says("anything", "  ")
