"""The session tier (``convmem.store.session``) on a real redis-server, in front of each backend.

- every store write method is classified in ``effects.EFFECTS`` (the list of write methods is
  the gate test's: ``tests/test_gate_bypass.py``);
- a request answered through the tier equals the one the database alone gives, after every kind
  of write (append, edit, regenerate, branch switch, pins, deletes, a kept assembly), and the
  tier did answer from Redis (hits), not only pass through;
- Redis killed, paused (slow) or flushed: requests fall back to the database and say so; after
  it returns nothing is stale, a server restored from an old snapshot included;
- erased with the rest: after a delete, no value in Redis holds the deleted text, and no key
  names a tenant, user or conversation in clear.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import convmem
from convmem.store.session import SessionTier
from convmem.store.session.effects import EFFECTS
from tests.redis_server import RedisServer
from tests.store.backends import Backend
from tests.test_gate_bypass import _write_methods

PROFILE = convmem.ModelProfile(context_window=2048, max_output=256, tokenizer="o200k_base")


def test_every_write_method_of_the_store_is_classified_for_the_tier() -> None:
    writes = _write_methods()
    unclassified = writes - EFFECTS.keys()
    assert not unclassified, (
        f"store write methods {sorted(unclassified)} are not in convmem.store.session.effects."
        "EFFECTS: say what they change of the session tier's cached state"
    )
    assert EFFECTS.keys() <= writes  # the table names real methods


def request_of(ctx: convmem.AssembledContext) -> dict[str, Any]:
    """What a request sends and what it was built from (not how the tier answered)."""
    report = ctx.report
    return {
        "messages": ctx.messages,
        "system": ctx.system,
        "included": report.included_ids,
        "evicted": report.evicted_ids,
        "summary": report.summary_id,
        "memories": report.memory_ids,
        "sections": report.sections,
    }


@pytest.fixture
def pair(backend: Backend, redis_url: str) -> Iterator[tuple[convmem.Memory, convmem.Memory]]:
    """The same database opened with the tier and without it."""
    with convmem.open(backend.url, session=redis_url) as tiered, convmem.open(backend.url) as plain:
        assert isinstance(tiered.store, SessionTier)
        yield tiered, plain


def _same(tiered: convmem.Memory, plain: convmem.Memory, conv_id: str, ask: str) -> str | None:
    got = tiered.scope("acme", "alice").conversation(conv_id).assemble(ask, model=PROFILE)
    want = plain.scope("acme", "alice").conversation(conv_id).assemble(ask, model=PROFILE)
    assert request_of(got) == request_of(want)
    return got.report.session


def test_every_write_is_seen_by_the_next_request(
    pair: tuple[convmem.Memory, convmem.Memory],
) -> None:
    tiered, plain = pair
    alice = tiered.scope("acme", "alice")
    conv = alice.create_conversation(title="trip")
    outcomes = []
    for i in range(12):
        conv.append("user", f"question {i} about the Lisbon flight TP{1300 + i}")
        reply = conv.append("assistant", f"answer {i}: gate {i + 3}, seat {i}A")
        outcomes.append(_same(tiered, plain, conv.id, "which gate?"))
        outcomes.append(_same(tiered, plain, conv.id, "which seat?"))
    assert outcomes[0] == "miss" and outcomes.count("hit") >= 20, outcomes  # appends wrote through
    edited = conv.edit(reply.id, "answer 11 edited: gate 99")
    assert _same(tiered, plain, conv.id, "which gate?") == "miss"  # an edit is read again
    assert _same(tiered, plain, conv.id, "which gate?") == "hit"
    conv.regenerate(edited.id)
    _same(tiered, plain, conv.id, "which gate?")
    conv.switch_branch(reply.id)
    _same(tiered, plain, conv.id, "which gate?")
    pin = alice.pin("Answer in French.")
    _same(tiered, plain, conv.id, "which gate?")
    conv.pin("Keep it short.")
    _same(tiered, plain, conv.id, "which gate?")
    alice.unpin(pin.id)
    _same(tiered, plain, conv.id, "which gate?")
    conv.delete_message(reply.id)
    _same(tiered, plain, conv.id, "which gate?")
    ctx = conv.assemble("keep this one", model=PROFILE)
    conv.record_assembly(ctx)
    assert conv.last_assembly() is not None
    assert _same(tiered, plain, conv.id, "and now?") == "hit"  # the kept report wrote through


def _filled(tiered: convmem.Memory, plain: convmem.Memory) -> str:
    conv = tiered.scope("acme", "alice").create_conversation(title="t")
    conv.append("user", "the hotel reference is PX-4471")
    conv.append("assistant", "noted")
    assert _same(tiered, plain, conv.id, "reference?") == "miss"
    assert _same(tiered, plain, conv.id, "reference?") == "hit"
    return conv.id


def _tier(memory: convmem.Memory) -> SessionTier:
    assert isinstance(memory.store, SessionTier)
    return memory.store


def test_redis_killed_is_no_outage_and_nothing_is_stale_when_it_returns(
    backend: Backend, redis_server: RedisServer
) -> None:
    with (
        convmem.open(backend.url, session=redis_server.url) as tiered,
        convmem.open(backend.url, session=redis_server.url) as other,  # a second process
        convmem.open(backend.url) as plain,
    ):
        conv_id = _filled(tiered, plain)
        assert _same(other, plain, conv_id, "reference?") == "hit"
        redis_server.kill()
        conv = tiered.scope("acme", "alice").conversation(conv_id)
        ctx = conv.assemble("reference?", model=PROFILE)
        assert ctx.report.session == "unavailable"
        assert ctx.report.degraded == ["session: error ConnectionError"]
        conv.append("user", "written while Redis was away")  # acknowledged, owed to the tier
        assert _tier(tiered).redis.owed == 1
        assert _same(other, plain, conv_id, "reference?") == "unavailable"
        redis_server.start()  # empty: nothing saved
        time.sleep(_tier(tiered).redis.retry_after)
        assert _same(other, plain, conv_id, "reference?") == "miss"
        # the writer's owed move goes first, and drops what the other process put back
        assert _same(tiered, plain, conv_id, "reference?") == "miss"
        assert _tier(tiered).redis.owed == 0
        assert _same(other, plain, conv_id, "reference?") == "hit"


def test_a_server_restored_from_an_old_snapshot_is_not_trusted(
    backend: Backend, tmp_path: Any
) -> None:
    server = RedisServer(persist=True)
    server.start()
    try:
        with (
            convmem.open(backend.url, session=server.url) as tiered,
            convmem.open(backend.url, session=server.url) as writer,
            convmem.open(backend.url) as plain,
        ):
            conv_id = _filled(tiered, plain)
            server.save()  # the snapshot holds the cached state and its generations
            server.kill()
            writer.scope("acme", "alice").conversation(conv_id).append("user", "after the save")
            server.start()  # the old snapshot comes back, the write's move does not
            time.sleep(_tier(writer).redis.retry_after)
            # the reader is not the process that owes the move: the run id refuses the value
            assert _same(tiered, plain, conv_id, "reference?") == "miss"
    finally:
        server.stop()


def test_a_slow_redis_is_cut_off_at_its_time_limit(
    backend: Backend, redis_server: RedisServer
) -> None:
    with (
        convmem.open(backend.url, session=redis_server.url) as tiered,
        convmem.open(backend.url) as plain,
    ):
        conv_id = _filled(tiered, plain)
        limit = _tier(tiered).redis.timeout
        redis_server.pause()
        try:
            started = time.monotonic()
            conv = tiered.scope("acme", "alice").conversation(conv_id)
            ctx = conv.assemble("reference?", model=PROFILE)
            assert time.monotonic() - started < limit + 2.0
            assert ctx.report.session == "unavailable"
            assert ctx.report.degraded == [f"session: timeout {round(limit * 1000)} ms"]
            conv.append("user", "written while Redis was slow")
            # within the retry pause the tier is not asked again: no second wait
            started = time.monotonic()
            assert _same(tiered, plain, conv_id, "reference?") == "unavailable"
            assert time.monotonic() - started < limit
        finally:
            redis_server.resume()
        time.sleep(_tier(tiered).redis.retry_after)
        assert _same(tiered, plain, conv_id, "reference?") == "miss"
        assert _same(tiered, plain, conv_id, "reference?") == "hit"


def test_a_flushed_redis_is_a_miss(backend: Backend, redis_server: RedisServer) -> None:
    with (
        convmem.open(backend.url, session=redis_server.url) as tiered,
        convmem.open(backend.url) as plain,
    ):
        conv_id = _filled(tiered, plain)
        redis_server.client().flushall()  # type: ignore[attr-defined]
        assert _same(tiered, plain, conv_id, "reference?") == "miss"
        assert _same(tiered, plain, conv_id, "reference?") == "hit"


def test_another_principal_gets_not_found_from_a_cached_conversation(
    pair: tuple[convmem.Memory, convmem.Memory],
) -> None:
    tiered, plain = pair
    conv_id = _filled(tiered, plain)
    for tenant, user in (("acme", "bob"), ("other", "alice")):
        with pytest.raises(convmem.NotFound):
            tiered.scope(tenant, user).conversation(conv_id).assemble("hi", model=PROFILE)


SAID = "Zanzibar-7731-quokka"
PINNED = "Ulaanbaatar-4410-axolotl"


@pytest.mark.parametrize("what", ["message", "conversation", "pin", "user", "tenant"])
def test_erased_with_the_rest(pair: tuple[convmem.Memory, convmem.Memory], what: str) -> None:
    tiered, plain = pair
    alice = tiered.scope("acme", "alice")
    conv = alice.create_conversation(title="t")
    conv.append("user", "hello")
    said = conv.append("assistant", f"the code word is {SAID}")
    pin = alice.pin(f"Always mention {PINNED}.")
    conv.append("user", "and?")
    assert _same(tiered, plain, conv.id, "code word?") == "miss"
    assert _same(tiered, plain, conv.id, "code word?") == "hit"
    redis = _tier(tiered).redis
    before = redis.contents()
    assert SAID.encode() in before and PINNED.encode() in before  # the tier did hold them
    for name in (b"acme", b"alice", conv.id.encode()):
        assert all(name not in key for key in redis.key_names())  # names are hashed
    gone: dict[str, Callable[[], object]] = {
        "message": lambda: conv.delete_message(said.id),
        "conversation": conv.delete,
        "pin": lambda: alice.unpin(pin.id),
        "user": alice.delete_all,
        "tenant": lambda: tiered.erase_tenant("acme"),
    }
    gone[what]()
    erased = {"message": [SAID], "conversation": [SAID], "pin": [PINNED]}.get(what, [SAID, PINNED])
    after = redis.contents()
    for text in erased:
        assert text.encode() not in after


def test_the_setting_opens_the_tier_and_a_bad_url_is_refused(
    tmp_path: Any, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.db"
    monkeypatch.setenv("CONVMEM_SESSION", redis_url)
    with convmem.open(path) as memory:
        assert isinstance(memory.store, SessionTier)
    with convmem.open(path, session="none") as memory:
        assert not isinstance(memory.store, SessionTier)
    monkeypatch.setenv("CONVMEM_SESSION", "none")
    with convmem.open(path) as memory:
        assert not isinstance(memory.store, SessionTier)
    with pytest.raises(convmem.InvalidInput, match="not a Redis URL"):
        convmem.open(path, session="http://cache:6379")
