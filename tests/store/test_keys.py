"""API keys at the library level, on every backend: issued once, stored hashed, bound to tenant
and role. (The SQLite row of a key: ``tests/store/sqlite/test_key_rows.py``.)"""

from __future__ import annotations

import pytest

import convmem
from convmem.keys import parse_token
from tests.store.backends import Backend


def test_a_key_authenticates_and_its_secret_is_stored_nowhere(
    memory: convmem.Memory, backend: Backend
) -> None:
    issued = memory.keys.create("acme", "user", user="alice", name="alice's page")
    key = memory.keys.authenticate(issued.token)
    assert key is not None
    assert (key.id, key.tenant_id, key.role, key.user_id) == (
        issued.key.id,
        "acme",
        "user",
        "alice",
    )
    parsed = parse_token(issued.token)
    assert parsed is not None
    stored = backend.dump()
    assert issued.key.id in stored  # the probe does see the key's row
    assert parsed[1] not in stored and issued.token not in stored


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # wrong secret
        lambda t: t.replace("cmk_", "xyz_"),  # wrong prefix
        lambda t: t[:20],  # truncated
        lambda t: "",
        lambda t: "cmk_" + "0" * 26 + "_" + t[-43:],  # unknown id
    ],
)
def test_a_wrong_key_does_not_authenticate(memory: convmem.Memory, mangle: object) -> None:
    issued = memory.keys.create("acme", "app")
    assert callable(mangle)
    assert memory.keys.authenticate(mangle(issued.token)) is None


def test_revoked_keys_stop_working_and_revoking_is_tenant_scoped(memory: convmem.Memory) -> None:
    issued = memory.keys.create("acme", "admin")
    with pytest.raises(convmem.NotFound):
        memory.keys.revoke("globex", issued.key.id)
    assert memory.keys.authenticate(issued.token) is not None
    revoked = memory.keys.revoke("acme", issued.key.id)
    assert revoked.revoked_at is not None
    assert memory.keys.authenticate(issued.token) is None
    assert [k.id for k in memory.keys.list("acme")] == [issued.key.id]
    assert memory.keys.list("globex") == []


def test_roles_and_user_binding_are_checked(memory: convmem.Memory) -> None:
    with pytest.raises(convmem.InvalidInput):
        memory.keys.create("acme", "user")
    with pytest.raises(convmem.InvalidInput):
        memory.keys.create("acme", "app", user="alice")
    with pytest.raises(convmem.InvalidInput):
        memory.keys.create("acme", "root")


def test_keys_are_credentials_not_user_data(memory: convmem.Memory) -> None:
    issued = memory.keys.create("acme", "user", user="alice")
    alice = memory.scope("acme", "alice")
    assert "api_keys" not in alice.export()["data"]
    alice.delete_all()
    assert memory.keys.authenticate(issued.token) is not None


def test_last_assembly_keeps_ids_and_counts_and_goes_with_the_conversation(
    alice: convmem.Scope, bob: convmem.Scope
) -> None:
    conv = alice.create_conversation()
    first = conv.append("user", "a secret plan for the trip")
    assert conv.last_assembly() is None
    ctx = conv.assemble("what was the plan?")
    conv.record_assembly(ctx)
    kept = conv.last_assembly()
    assert kept is not None
    assert kept.leaf_id == first.id
    assert kept.report["included_ids"] == [first.id]
    assert "secret plan" not in str(kept.to_dict())
    with pytest.raises(convmem.NotFound):
        bob.conversation(conv.id)
    conv.delete()
    assert "last_assemblies" not in {t for t, rows in alice.export()["data"].items() if rows}
