"""Entity memory on every backend: derived from user and assistant turns, merged by name and
alias, scoped to the user (and project), deleted with the messages that sourced it, rebuilt from
messages, exported, and never holding never-store content."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.store.base import WriteTxn
from convmem.store.retry import write_retried
from convmem.testing.harness import Backend

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _named(scope: convmem.Scope, name: str) -> convmem.Entity:
    found = [e for e in scope.entities.list(limit=500) if e.name == name]
    assert len(found) == 1, [e.name for e in scope.entities.list(limit=500)]
    return scope.entities.get(found[0].id)


def test_turns_become_entities_with_facts_names_types_and_mentions(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    first = conv.append("user", "My sister Ana Lopez moved to Lisbon last year.", created_at=T0)
    conv.append(
        "assistant", "Lisbon is lovely. Does Ana like the @lisbon_tram account?",
        created_at=T0 + timedelta(minutes=1),
    )  # fmt: skip
    last = conv.append(
        "user", "Ana is reading “The Lean Startup” at Acme Inc.",
        created_at=T0 + timedelta(minutes=2),
    )  # fmt: skip

    ana = _named(alice, "Ana Lopez")
    assert ana.type == "person"
    assert set(ana.aliases) >= {"my sister", "Ana"}
    assert ana.first_mention == T0 and ana.last_mention == T0 + timedelta(minutes=2)
    assert ana.mention_count == 3 == len(ana.facts)
    assert {f.message_id for f in ana.facts} >= {first.id, last.id}
    assert all(0 < f.confidence <= 1 and f.conversation_id == conv.id for f in ana.facts)
    assert _named(alice, "Lisbon").type == "place"
    assert _named(alice, "@lisbon_tram").type == "person"
    assert _named(alice, "The Lean Startup").type == "work"
    assert _named(alice, "Acme Inc").type == "organisation"
    # the newest mention first
    assert alice.entities.list()[0].last_mention == T0 + timedelta(minutes=2)


def test_a_name_and_its_full_form_and_stated_nickname_are_one_entity(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I had lunch with Caroline today.", created_at=T0)
    conv.append("user", "Caroline Smith is my best friend.", created_at=T0 + timedelta(hours=1))
    conv.append("user", "Caroline (Caro) starts a new job.", created_at=T0 + timedelta(hours=2))
    people = [e for e in alice.entities.list() if "caroline" in e.name.lower()]
    assert [e.name for e in people] == ["Caroline Smith"]
    assert {"Caroline", "Caro"} <= set(people[0].aliases)
    assert people[0].mention_count == 3
    assert [e.id for e in alice.entities.search("what does caro do?")] == [people[0].id]
    assert [e.id for e in alice.entities.search("CAROLINE SMITH's job")] == [people[0].id]


def test_sentence_initial_words_weekdays_and_pronouns_are_not_entities(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append(
        "user",
        "Yesterday was long. Monday I start. She said Hello. Montag war gut. Hoy es lunes.",
    )
    assert alice.entities.list() == []
    # a sentence-initial name counts once the user's conversations know it
    conv.append("user", "I met Bruno at the gym.")
    conv.append("user", "Bruno runs marathons.")
    assert _named(alice, "Bruno").mention_count == 2


def test_tool_results_and_temporary_conversations_leave_no_entities(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "Look up the weather.")
    conv.append("assistant", "", tool_calls=[convmem.ToolCall(id="c1", name="w", arguments="{}")])
    conv.append("tool", "Rain expected in Reykjavik with Gunnar Olafsson.", tool_call_id="c1")
    temporary = alice.create_conversation(temporary=True)
    temporary.append("user", "My brother Tobias lives in Oslo.")
    assert alice.entities.list() == []


def test_deleting_a_message_deletes_its_facts_and_entities_left_without(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    keep = conv.append("user", "I saw Ana in Lisbon.", created_at=T0)
    doomed = conv.append(
        "user", "Ana loves Zanzibarquux pastries.", created_at=T0 + timedelta(minutes=1)
    )
    ana = _named(alice, "Ana")
    assert ana.mention_count == 2
    assert "zanzibarquux" in backend.dump().lower()

    conv.delete_message(doomed.id)
    ana = _named(alice, "Ana")
    assert [f.message_id for f in ana.facts] == [keep.id]
    assert [e.name for e in alice.entities.list() if e.name == "Zanzibarquux"] == []
    assert "zanzibarquux" not in backend.dump().lower()
    assert conv.message(keep.id).content == "I saw Ana in Lisbon."


def test_deleting_a_conversation_or_everything_deletes_the_entities(
    backend: Backend, memory: convmem.Memory
) -> None:
    alice = memory.scope("acme", "alice")
    bob = memory.scope("acme", "bob")
    conv = alice.create_conversation()
    conv.append("user", "My dog Quixbert chases Wolfgang Amadeus.")
    bob.create_conversation().append("user", "My cat Florentyna sleeps.")
    conv.delete()
    assert alice.entities.list() == []
    assert "quixbert" not in backend.dump().lower()
    other = alice.create_conversation()
    other.append("user", "My dog Quixbert is back.")
    assert alice.entities.list() != []
    alice.delete_all()
    assert alice.entities.list() == []
    assert "quixbert" not in backend.dump().lower()
    assert [e.name for e in bob.entities.list()] == ["Florentyna"]


def test_retention_sweep_deletes_facts_and_entities_last_mentioned_before_a_time(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "I saw Ana in Lisbon.", created_at=T0)
    conv.append("user", "I saw Ana in Porto.", created_at=T0 + timedelta(days=10))

    def sweep(tx: WriteTxn) -> int:
        return tx.delete_entity_facts_before("acme", T0 + timedelta(days=5))

    assert write_retried(memory.store, sweep) == 2  # Ana's and Lisbon's old facts
    assert sorted(e.name for e in alice.entities.list()) == ["Ana", "Porto"]
    assert _named(alice, "Ana").first_mention == T0 + timedelta(days=10)


def test_deleting_an_entity_keeps_the_messages_and_is_audited(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    said = conv.append("user", "My boss Heidrun Kessler approved the plan.")
    boss = _named(alice, "Heidrun Kessler")
    alice.entities.delete(boss.id)
    assert alice.entities.list() == []
    assert conv.message(said.id).content == "My boss Heidrun Kessler approved the plan."
    assert [e.action for e in alice.audit() if e.object_id == boss.id] == ["entity.deleted"]
    with pytest.raises(convmem.NotFound):
        alice.entities.get(boss.id)


def test_another_principals_entity_ids_are_not_found(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "My sister Ana Lopez paints.")
    ana = _named(alice, "Ana Lopez")
    fact = ana.facts[0]
    for other in (memory.scope("acme", "mallory"), memory.scope("evil", "alice")):
        with pytest.raises(convmem.NotFound):
            other.entities.get(ana.id)
        with pytest.raises(convmem.NotFound):
            other.entities.delete(ana.id)
        with pytest.raises(convmem.NotFound):
            other.entities.promote(ana.id, fact.id)
        assert other.entities.search("Ana Lopez") == []
    assert _named(alice, "Ana Lopez").mention_count == 1


def test_promoting_a_fact_makes_a_confirmed_memory_citing_its_message(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    said = alice.create_conversation().append("user", "My sister Ana Lopez is vegetarian.")
    assert alice.memories.list() == []  # nothing becomes a memory by itself
    ana = _named(alice, "Ana Lopez")
    notice = alice.entities.promote(ana.id, ana.facts[0].id)
    assert notice.status == "saved" and notice.memory is not None
    assert notice.memory.status == "confirmed"
    assert notice.memory.source_message_id == said.id
    assert [m.text for m in alice.memories.list()] == ["My sister Ana Lopez is vegetarian."]
    with pytest.raises(convmem.NotFound):
        alice.entities.promote(ana.id, "fact_nope")


def test_rebuild_derives_the_same_entities_from_the_messages(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    conv.append("user", "My sister Ana Lopez moved to Lisbon.", created_at=T0)
    conv.append("assistant", "Ana will enjoy Lisbon.", created_at=T0 + timedelta(minutes=1))

    def shape() -> list[tuple[str, str, int, tuple[str, ...]]]:
        return sorted(
            (e.name, e.type, e.mention_count, tuple(sorted(e.aliases)))
            for e in alice.entities.list()
        )

    before = shape()
    assert before
    assert alice.entities.rebuild() == sum(n for _, _, n, _ in before)
    assert shape() == before


def test_a_project_conversations_entities_are_in_the_projects_scope(
    memory: convmem.Memory,
) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation(metadata={"project": "apollo"}).append(
        "user", "Contact Margarethe Voss about the launch."
    )
    alice.create_conversation().append("user", "Dinner with Theodor tonight.")
    assert [e.name for e in alice.entities.list(scope="project:apollo")] == ["Margarethe Voss"]
    assert [e.name for e in alice.entities.list(scope="user")] == ["Theodor"]
    with pytest.raises(convmem.InvalidInput):
        alice.entities.list(scope="elsewhere")


def test_the_export_holds_the_entities(memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    alice.create_conversation().append("user", "My dog Rex loves Hampstead Heath.")
    data = json.dumps(alice.export()["data"], default=str)
    assert "Hampstead Heath" in data and "Rex" in data


# Never-store content in every field an entity has: its name, an alias, a quoted title, a fact's
# sentence — secrets and sensitive data in several languages and formats.
SECRET_TURNS = [
    "My friend Ana said her password is Sommer2024Kiwi! and she uses it everywhere.",
    "Mein Freund Jonas sagt: Mein Passwort ist Sommer2024Kiwi!",
    "Ma sœur Claire a dit: mon mot de passe est Sommer2024Kiwi.",
    "Mi amigo Pablo usa la contraseña Sommer2024Kiwi en todo.",
    "Use “sk-proj-M0XvqZjxTW3xvboSRt5Mh3dAwVtRMflhbmuaptt0Azn0DNRU” for Project Hydra.",
    "My colleague @AKIAE54X59G3AWM3TVW7 pays with 4111 1111 1111 1111.",
    "Caroline (ghp_7du45pKcP753ivdSmDrUd7z14cKuuBNf0gmU) manages the repo.",
    "Send it to IBAN DE89 3704 0044 0532 0130 00, says Berthold.",
    "I told my brother Luca that I have HIV.",
    "Ich habe HIV, sagte ich zu Lukas Brenner.",
    "Je suis séropositif, comme Marc Dupont le sait.",
]
SECRET_FRAGMENTS = [
    "sommer2024kiwi", "m0xvqzjxtw3xvbosrt5mh3dawvtrmflhbmuaptt0azn0dnru", "akiae54x59g3awm3tvw7",
    "4111 1111", "ghp_7du45pkcp753ivdsmdrud7z14ckuubnf0gmu", "de89 3704", "hiv", "séropositif",
]  # fmt: skip


def test_no_entity_row_holds_never_store_content(backend: Backend, memory: convmem.Memory) -> None:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation()
    for text in SECRET_TURNS:
        conv.append("user", text)
    stored = json.dumps(
        [alice.entities.get(e.id).to_dict() for e in alice.entities.list(limit=500)],
        ensure_ascii=False,
    ).lower()
    for fragment in SECRET_FRAGMENTS:
        assert fragment not in stored, fragment
    # and nowhere in the entity tables once the messages are gone
    conv.delete_message(conv.branch()[0].id)
    dump = backend.dump().lower()
    for fragment in SECRET_FRAGMENTS:
        assert fragment not in dump, fragment


def test_a_tenant_wide_rebuild_reaches_every_user_of_the_tenant_and_no_other(
    memory: convmem.Memory,
) -> None:
    users = [f"user-{n:03}" for n in range(205)]  # more than one page of the store's listing
    for user in users:
        memory.scope("acme", user).create_conversation().append(
            "user", f"My cousin Ana Lopez visits {user} in Lisbon.", created_at=T0
        )
    outsider = memory.scope("other", "user-000")
    outsider.create_conversation().append("user", "My friend Rui lives in Porto.", created_at=T0)
    for scope in [memory.scope("acme", u) for u in users] + [outsider]:
        for entity in scope.entities.list(limit=500):  # derived data: dropped, to be rebuilt
            scope.entities.delete(entity.id)
    assert memory.scope("acme", users[-1]).entities.list() == []

    with memory.store.read() as tx:
        assert tx.tenant_users("acme", None, 1000) == users
        assert tx.tenant_users("acme", users[199], 10) == users[200:]
        assert tx.tenant_users("nobody", None, 10) == []
    seen: list[int] = []
    facts = memory.rebuild_entities("acme", progress=lambda kind, done: seen.append(done))
    assert facts >= len(users) and seen[-1] == len(users)
    assert all(
        {"Ana Lopez", "Lisbon"} <= {e.name for e in memory.scope("acme", u).entities.list()}
        for u in (users[0], users[150], users[-1])
    )
    assert outsider.entities.list() == []  # another tenant's users are not touched
    assert memory.rebuild_entities("other", "user-000") >= 1
    assert {e.name for e in outsider.entities.list()} >= {"Rui", "Porto"}
