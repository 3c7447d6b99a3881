"""Special categories a tenant opens to explicit requests (issue 36, item 3), on every backend:
a sensitive statement is kept only when the tenant opened its category AND the user asked for
it themselves; it is marked sensitive in storage and the export; it is never proposed, inferred,
imported, consolidated or made an entity fact; it is recalled only for the purposes the tenant
named, and only while the category stays open; credentials and payment data stay refused
whatever the policy. (Its erasure with the rest: ``test_residue_matrix``.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.errors import InvalidInput
from convmem.importers.mem0 import import_mem0
from convmem.testing.contract.test_consolidation import _consolidate

ALLERGY = "Remember that I am allergic to peanuts."
PROFILE = convmem.ModelProfile(context_window=8192, max_output=512, tokenizer="o200k_base")


def _open(memory: convmem.Memory, *categories: str, **more: object) -> None:
    memory.set_tenant_policy("acme", sensitive_categories=list(categories), **more)  # type: ignore[arg-type]


def _recalled(scope: convmem.Scope, question: str, **kwargs: object) -> list[str]:
    conv = scope.create_conversation()
    report = conv.assemble(question, model=PROFILE, **kwargs).report  # type: ignore[arg-type]
    texts = {m.id: m.text for m in scope.memories.list()}
    return [texts[i] for i in report.memory_ids if i in texts]


def test_closed_by_default_an_explicit_request_is_refused_and_nothing_is_kept(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    assert memory.tenant_policy("acme").sensitive_categories == ()
    said = alice.create_conversation().append("user", ALLERGY)
    assert [(n.status, n.reason) for n in said.notices] == [("blocked", "health")]
    assert alice.memories.list(status=None) == []
    with pytest.raises(convmem.NeverStoreViolation):
        alice.remember("I am allergic to peanuts.", strict=True)
    german = alice.create_conversation().append(
        "user", "Merk dir, dass ich allergisch gegen Nüsse bin."
    )
    assert [(n.status, n.reason) for n in german.notices] == [("blocked", "health")]
    assert alice.memories.list(status=None) == []


def test_opened_an_explicit_request_is_kept_marked_and_exported(
    memory: convmem.Memory, alice: convmem.Scope, bob: convmem.Scope
) -> None:
    _open(memory, "health")
    said = alice.create_conversation().append("user", ALLERGY)
    (notice,) = said.notices
    assert notice.status == "saved" and notice.memory is not None
    kept = alice.memories.get(notice.memory.id)
    assert (kept.sensitivity, kept.status, kept.source_kind) == (
        "health", "confirmed", "user_explicit",
    )  # fmt: skip
    assert "peanuts" in kept.text
    exported = {m["id"]: m for m in alice.export()["data"]["memories"]}
    assert exported[kept.id]["sensitivity"] == "health"
    # through the API's remember too (the application says the user asked), and in another
    # language the detectors read
    api = alice.remember("Ich bin allergisch gegen Erdnüsse.")
    assert api.status == "saved" and api.memory is not None
    assert api.memory.sensitivity == "health"
    # a request whose clause puts the verb last is read as the statement it is
    german = alice.create_conversation().append(
        "user", "Merk dir, dass ich allergisch gegen Nüsse bin."
    )
    assert [(n.status, n.memory and n.memory.sensitivity) for n in german.notices] == [
        ("saved", "health")
    ]
    # an ordinary memory is not marked
    plain = bob.remember("I prefer aisle seats.")
    assert plain.memory is not None and plain.memory.sensitivity == "none"


def test_never_proposed_inferred_imported_or_consolidated(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    _open(memory, "health", "sensitive_category")
    first = alice.create_conversation()
    # a plain statement is no request: nothing is proposed, nothing is said
    assert first.append("user", "I'm allergic to peanuts.").notices == ()
    second = alice.create_conversation()
    second.append("user", "I am allergic to peanuts, by the way.")
    # a repeated statement is not consolidated into a proposal
    _consolidate(memory, alice)
    # an application's proposal or a model's guess is refused with the category
    proposed = alice.propose("I am allergic to peanuts.")
    assert (proposed.status, proposed.reason) == ("blocked", "health")
    guessed = alice.propose("The user seems to be depressed.")
    assert (guessed.status, guessed.reason) == ("blocked", "inferred_sensitive_trait")
    # an import is not the user's request
    report = import_mem0(
        memory, "acme", [{"id": "m1", "memory": "Has a peanut allergy"}], user="alice"
    )
    assert report.saved == 0 and report.blocked == [("m1", "health")]
    assert alice.memories.list(status=None) == []
    # nor a fact of the place it names, even when the user asked to remember it
    conv = alice.create_conversation()
    conv.append("user", "Remember that I am allergic to the peanut sauce at Cafe Lumen.")
    conv.append("user", "I went to Cafe Lumen with Ana Lopez yesterday.")
    facts = [f.text for e in alice.entities.list() for f in alice.entities.get(e.id).facts]
    assert facts and not [f for f in facts if "peanut" in f]
    assert [m.source_kind for m in alice.memories.list()] == ["user_explicit"]


def test_only_the_opened_category_and_never_a_secret_or_a_card(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    _open(memory, "health")
    conv = alice.create_conversation()
    kosher = conv.append("user", "Remember that I keep kosher.")
    assert [(n.status, n.reason) for n in kosher.notices] == [("blocked", "sensitive_category")]
    both = conv.append("user", "Remember that I am allergic to peanuts and I keep kosher.")
    assert [(n.status, n.reason) for n in both.notices] == [("blocked", "sensitive_category")]
    card = alice.remember("I am allergic to peanuts; my card is 4111 1111 1111 1111.")
    assert (card.status, card.reason) == ("blocked", "payment_card")
    secret = alice.remember("I am allergic to peanuts and my password is Falcon!9921")
    assert (secret.status, secret.reason) == ("blocked", "credential")
    assert alice.memories.list(status=None) == []
    for closed in (["payment_card"], ["credential"], ["government_id"], ["bank_account"],
                   ["inferred_sensitive_trait"], "health"):  # fmt: skip
        with pytest.raises(InvalidInput):
            memory.set_tenant_policy("acme", sensitive_categories=closed)
    # both categories open: one memory holding both is marked with both
    _open(memory, "health", "sensitive_category")
    kept = alice.remember("I am allergic to peanuts and I keep kosher.")
    assert kept.memory is not None
    assert kept.memory.sensitivity == "health,sensitive_category"


def test_recalled_only_for_the_named_purposes_and_while_open(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    _open(memory, "health")
    alice.remember("I prefer aisle seats.")
    allergy = alice.remember("I am allergic to peanuts.")
    assert allergy.memory is not None
    question = "What should I avoid eating on the flight?"
    # the tenant named personalization (the default): a request that may use it recalls it
    assert "I am allergic to peanuts." in _recalled(alice, question)
    assert [h.memory.id for h in alice.search_memories("peanuts")] == [allergy.memory.id]
    # a request that may use only another purpose does not, in recall or search
    assert "I am allergic to peanuts." not in _recalled(
        alice, question, purposes=["task_automation"]
    )
    assert alice.search_memories("peanuts", purposes=["task_automation"]) == []
    automation = memory.scope("acme", "alice", purposes=["task_automation"])
    assert automation.search_memories("peanuts") == []
    # the tenant names only task_automation: a personalization memory is recalled by nobody,
    # one kept for task_automation by a request that may use it
    _open(memory, "health", sensitive_purposes=["task_automation"])
    assert alice.search_memories("peanuts") == []
    task = alice.remember("I am allergic to peanuts and sesame.", purpose="task_automation")
    assert task.memory is not None and task.memory.sensitivity == "health"
    assert [h.memory.id for h in automation.search_memories("sesame")] == [task.memory.id]
    assert alice.search_memories("sesame", purposes=["personalization"]) == []
    # closed again: nothing sensitive is recalled, but the user still sees and deletes it
    memory.set_tenant_policy("acme")
    assert alice.search_memories("peanuts") == []
    assert automation.search_memories("sesame") == []
    assert "I am allergic to peanuts." not in _recalled(alice, question)
    listed = {m.id: m.sensitivity for m in alice.memories.list()}
    assert listed[allergy.memory.id] == "health"
    assert alice.memories.delete(allergy.memory.id) == [allergy.memory.id]
    # and a new request is refused again
    assert alice.remember("I am allergic to kiwis.").reason == "health"


def test_an_edit_by_the_user_stays_within_the_opened_category(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    _open(memory, "health")
    kept = alice.remember("I am allergic to peanuts.")
    assert kept.memory is not None
    edited = alice.memories.update(kept.memory.id, "I am allergic to peanuts and almonds.")
    assert edited.status == "saved" and edited.memory is not None
    assert edited.memory.sensitivity == "health"
    refused = alice.memories.update(edited.memory.id, "I am allergic to my PIN 4921.")
    assert refused.status == "blocked"


def test_the_policy_is_kept_per_tenant_and_validated(memory: convmem.Memory) -> None:
    policy = memory.set_tenant_policy(
        "acme", sensitive_categories=["health"], sensitive_purposes=["personalization"],
        max_pending_proposals=3, retention={"proposals": 14},
    )  # fmt: skip
    assert memory.tenant_policy("acme") == policy
    assert memory.tenant_policy("globex").sensitive_categories == ()
    assert policy.to_dict()["sensitive_categories"] == ["health"]
    with pytest.raises(InvalidInput):
        memory.set_tenant_policy("acme", sensitive_purposes=["marketing"])
    with pytest.raises(InvalidInput):
        memory.set_tenant_policy("acme", max_pending_proposals=0)
    assert memory.tenant_policy("acme") == policy  # a refused change wrote nothing
    later = datetime.now(UTC) + timedelta(days=1)
    assert memory.sweep_retention("acme", now=later) == {"acme": {"proposals": 0}}


def test_a_request_that_disagrees_with_a_kept_one_waits_with_its_category(
    memory: convmem.Memory, alice: convmem.Scope
) -> None:
    """A user's own statement that differs from a kept one on its slot waits for the user to
    choose (issue 36, item 2): still their explicit request, so an opened category holds while it
    waits and once they confirm it; recall reads neither the waiting one nor a closed one."""
    _open(memory, "health")
    conv = alice.create_conversation()
    conv.append("user", "Remember that I drink only decaf because of my heart condition.")
    said = conv.append("user", "Remember that I drink green tea because of my diabetes.")
    (notice,) = said.notices
    assert (notice.status, notice.reason) == ("proposed", "conflict")
    assert notice.memory is not None and notice.memory.sensitivity == "health"
    assert alice.search_memories("green tea diabetes") == []  # waiting: not recalled
    kept = alice.memories.confirm(notice.memory.id)
    assert (kept.status, kept.sensitivity) == ("confirmed", "health")
    assert [h.memory.id for h in alice.search_memories("green tea diabetes")] == [kept.id]
