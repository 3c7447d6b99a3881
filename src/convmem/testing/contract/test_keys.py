"""API keys at the library level, on every backend: issued once, stored hashed, bound to tenant
and role."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import convmem
from convmem.domain.keys import parse_token
from convmem.testing.harness import Backend


def test_a_key_authenticates_and_only_its_secret_s_hash_is_stored(
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
    assert hashlib.sha256(parsed[1].encode()).hexdigest() in stored  # kept as its SHA-256


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


def test_a_sign_in_link_works_once_and_starts_a_session_until_signed_out(
    memory: convmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from convmem.domain import page_sessions
    from convmem.domain.page_sessions import PageSessions

    sessions = PageSessions(memory)
    link = sessions.mint_link("acme", "alice")
    assert link.session.kind == "link" and link.session.user_id == "alice"
    assert sessions.authenticate(link.token) is None  # a link is not a session
    started = sessions.exchange(link.token)
    assert started is not None and started.session.kind == "session"
    assert sessions.exchange(link.token) is None  # single use
    live = sessions.authenticate(started.token)
    assert live is not None and (live.tenant_id, live.user_id) == ("acme", "alice")
    # a wrong secret, another tenant's prefix, garbage: refused
    wrong = started.token[:-1] + ("A" if started.token[-1] != "A" else "B")
    assert sessions.authenticate(wrong) is None
    assert sessions.authenticate("cmp_Z2xvYmV4." + started.token.split(".", 1)[1]) is None
    assert sessions.authenticate("not a token") is None
    sessions.end(started.token)
    assert sessions.authenticate(started.token) is None
    # only hashes are stored
    with memory.store.read() as tx:
        stored = tx.find_page_session("acme", started.session.id)
    assert stored is not None and stored.secret_sha256 not in started.token
    assert stored.session.ended_at is not None

    # an expired link, and a session idle too long, are refused
    monkeypatch.setattr(page_sessions, "LINK_LIFETIME", timedelta(0))
    assert sessions.exchange(sessions.mint_link("acme", "alice").token) is None
    monkeypatch.setattr(page_sessions, "LINK_LIFETIME", timedelta(minutes=10))
    again = sessions.exchange(sessions.mint_link("acme", "alice").token)
    assert again is not None and sessions.authenticate(again.token) is not None
    monkeypatch.setattr(page_sessions, "SESSION_IDLE", timedelta(0))
    assert sessions.authenticate(again.token) is None


def test_ending_a_page_session_is_true_only_for_the_first_call(memory: convmem.Memory) -> None:
    from convmem.domain.page_sessions import PageSessions

    link = PageSessions(memory).mint_link("acme", "alice")
    when = datetime.now(UTC)
    with memory.store.write() as tx:
        assert tx.end_page_session("acme", link.session.id, when) is True
        assert tx.end_page_session("acme", link.session.id, when) is False
        assert tx.end_page_session("globex", link.session.id, when) is False
    with memory.store.read() as tx:
        assert tx.find_page_session("globex", link.session.id) is None


def test_a_key_used_again_is_not_read_again_and_a_revoke_here_stops_it_at_once(
    memory: convmem.Memory, backend: Backend
) -> None:
    """Authenticating a key in use costs no store read (the process keeps what it read for a
    few seconds); revoking it through this process stops it at the next request, cache or not;
    erasing the tenant stops its keys the same way."""
    issued = memory.keys.create("acme", "app")
    assert memory.keys.authenticate(issued.token) is not None
    reads = _count_key_reads(memory)
    assert memory.keys.authenticate(issued.token) is not None
    assert reads() == 0  # served from the process's cache
    wrong = issued.token[:-1] + ("A" if issued.token[-1] != "A" else "B")
    assert memory.keys.authenticate(wrong) is None  # the secret is checked every time
    memory.keys.revoke("acme", issued.key.id)
    assert memory.keys.authenticate(issued.token) is None
    other = memory.keys.create("acme", "app")
    assert memory.keys.authenticate(other.token) is not None
    memory.erase_tenant("acme")
    assert memory.keys.authenticate(other.token) is None


def test_a_key_revoked_by_another_process_stops_within_the_cache_s_time(
    memory: convmem.Memory, backend: Backend
) -> None:
    """Another process (a second service worker, the CLI) revokes the key: this one's cached
    record stands until its seconds are up, then the store's revocation wins."""
    from convmem.domain.keys import ApiKeys, KeyCache

    now = [100.0]
    cache = KeyCache(seconds=5.0, clock=lambda: now[0])
    here = ApiKeys(memory, cache)
    issued = memory.keys.create("acme", "app")
    assert here.authenticate(issued.token) is not None
    with backend.open() as elsewhere:  # a second process on the same database
        elsewhere.keys.revoke("acme", issued.key.id)
    now[0] += 4.9
    assert here.authenticate(issued.token) is not None  # the short window the cache allows
    now[0] += 0.2
    assert here.authenticate(issued.token) is None


def _count_key_reads(memory: convmem.Memory) -> Callable[[], int]:
    """How many times the store was asked for a key record from now on."""
    store = memory.store
    calls = [0]
    real_read = store.read

    @contextmanager
    def counted() -> Iterator[Any]:
        with real_read() as tx:
            real_find = tx.find_api_key

            def find(key_id: str) -> Any:
                calls[0] += 1
                return real_find(key_id)

            tx.find_api_key = find  # type: ignore[method-assign]
            yield tx

    store.read = counted  # type: ignore[method-assign]
    return lambda: calls[0]
