"""What a request's report says beside its sections: the prompt-cache estimate against the
previous recorded request, recall's candidates, irrelevant and expired memories, and the summary's
age and version. Real SQLite stores throughout."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import convmem
from convmem.content.tokens import get_counter, message_tokens
from convmem.context.prompt_cache import PROMPT_CACHE_TTL, prefix_chain, shared_prefix
from convmem.model.keys import AssemblyRecord
from convmem.summarize.extractive import VERSION as EXTRACTIVE_VERSION
from tests.test_summaries import DECISION, SMALL
from tests.test_summaries import chat as small_talk
from tests.test_tools_budget import OPENAI_TOOL

PROFILE = convmem.ModelProfile(context_window=2048, max_output=256, tokenizer="o200k_base")
SYSTEM = "You are a helpful travel assistant. Keep answers short."


def chat(conv: convmem.Conversation, turns: int, start: int = 0) -> None:
    for turn in range(start, start + turns):
        conv.append(
            "user", f"Question {turn}: which train reaches Lyon before noon, platform {turn}?"
        )
        conv.append("assistant", f"Answer {turn}: the 09:{turn % 60:02d} TGV, coach {turn % 9}.")


def leading_tokens(previous: list[dict[str, Any]], current: list[dict[str, Any]]) -> int:
    """The benchmark's measure: the tokens of the leading messages equal to the previous
    request's (counted per rendered Chat Completions message)."""
    counter = get_counter(PROFILE.tokenizer)
    shared = shared_prefix(previous, current)
    return sum(
        message_tokens(counter, m["role"], m.get("content") or "", (), m.get("tool_call_id"))
        for m in current[:shared]
    )


def test_prefix_chain_digests_each_prefix_and_the_format() -> None:
    a = [{"role": "system", "content": "s"}, {"role": "user", "content": "x"}]
    b = [{"role": "system", "content": "s"}, {"role": "user", "content": "y"}]
    assert shared_prefix(prefix_chain("openai", a), prefix_chain("openai", b)) == 1
    assert shared_prefix(prefix_chain("openai", a), prefix_chain("openai", a)) == 2
    # another format is another cache: nothing is shared
    assert shared_prefix(prefix_chain("openai", a), prefix_chain("anthropic", a)) == 0
    # digests only: 16 hex digits each, whatever the parts hold
    assert all(re.fullmatch(r"[0-9a-f]{16}", d) for d in prefix_chain("openai", a))


def test_cached_tokens_follow_the_previous_recorded_request(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, 3)
    first = conv.assemble("And the return trip?", model=PROFILE, system=SYSTEM)
    # nothing was recorded as sent: nothing is known to be cached
    assert first.report.cached_tokens == 0 and first.report.cached_share == 0.0
    assert len(first.report.prefix_digests) == len(first.messages)
    conv.record_assembly(first)
    conv.append("user", "And the return trip?")
    conv.append("assistant", "The 18:04 TGV from Lyon Part-Dieu.")

    second = conv.assemble("Is there a later one?", model=PROFILE, system=SYSTEM)
    report = second.report
    # everything the first request sent is the second's prefix, the earlier user message too
    # (sent as the new turn, now stored): the system prompt and all history but the new reply
    expected = leading_tokens(first.messages, second.messages)
    assert report.cached_tokens == expected
    assert 0 < expected < report.total_tokens
    assert expected == sum(
        message_tokens(get_counter("o200k_base"), m["role"], m["content"]) for m in first.messages
    )
    assert report.cached_share == round(expected / report.total_tokens, 4)


def test_a_changed_system_prompt_or_an_old_previous_request_is_a_miss(
    alice: convmem.Scope, memory: convmem.Memory
) -> None:
    conv = alice.create_conversation()
    chat(conv, 3)
    conv.record_assembly(conv.assemble(None, model=PROFILE, system=SYSTEM))
    again = conv.assemble(None, model=PROFILE, system=SYSTEM)
    assert again.report.cached_tokens == again.report.total_tokens - 3  # all but reply priming
    changed = conv.assemble(None, model=PROFILE, system=SYSTEM + " Be formal.")
    assert changed.report.cached_tokens == 0  # the first part differs: the cache misses
    anthropic = conv.assemble(None, model=PROFILE, system=SYSTEM, format="anthropic")
    assert anthropic.report.cached_tokens == 0  # another provider, another cache
    tools = conv.assemble(None, model=PROFILE, system=SYSTEM, tools=[OPENAI_TOOL])
    assert tools.report.cached_tokens == 0  # the tools come first: everything after moved

    # the same previous request, recorded longer ago than a provider keeps a prefix
    with memory.store.write() as tx:
        kept = tx.last_assembly("acme", "alice", conv.id)
        assert kept is not None
        old = datetime.now(UTC) - PROMPT_CACHE_TTL - timedelta(seconds=5)
        tx.put_last_assembly("acme", "alice", AssemblyRecord(conv.id, kept.leaf_id, old,
                                                             kept.report))  # fmt: skip
    assert conv.assemble(None, model=PROFILE, system=SYSTEM).report.cached_tokens == 0


def test_another_branch_shares_the_common_prefix_only(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    chat(conv, 2)
    fork = conv.branch()[-2]  # the last user message: a sibling answer is another branch
    one = conv.assemble("Thanks!", model=PROFILE, system=SYSTEM)
    conv.record_assembly(one)
    sibling = conv.append("assistant", "Another answer entirely.", parent_id=fork.id)
    two = conv.assemble("Thanks!", model=PROFILE, system=SYSTEM, leaf_id=sibling.id)
    # system prompt and the common turns up to the fork, not the diverging answers after it
    assert shared_prefix(one.messages, two.messages) == 4
    assert two.report.cached_tokens == leading_tokens(one.messages, two.messages)
    assert 0 < two.report.cached_tokens < one.report.total_tokens


def test_recall_reports_candidates_and_irrelevant_memories(alice: convmem.Scope) -> None:
    for text in ("I prefer aisle seats on trains.", "My cat is called Miso.",
                 "My favourite colour is green."):  # fmt: skip
        alice.remember(text, strict=True)
    conv = alice.create_conversation()
    context = conv.assemble("Book me an aisle seat to Lyon.", model=PROFILE, system=SYSTEM)
    report = context.report
    texts = {m.id: m.text for m in alice.memories.list()}
    assert report.memory_candidates == 3 and len(report.memory_ids) == 3
    # the message shares "aisle" with the seat memory and no term with the other two
    assert sorted(texts[i] for i in report.irrelevant_memory_ids) == [
        "My cat is called Miso.", "My favourite colour is green.",
    ]  # fmt: skip
    assert report.expired_memory_ids == []


def test_a_larger_set_counts_every_candidate_before_selection(alice: convmem.Scope) -> None:
    for i in range(12):
        alice.remember(f"Fact {i}: the project codename is Heron-{i}.", subject=f"fact{i}")
    conv = alice.create_conversation()
    options = convmem.AssemblyOptions(memory_k=4, memory_relevant_k=2)
    report = conv.assemble("What is the codename?", model=PROFILE, options=options).report
    # the block's four most recent, and the ranked ones for the message (distinct ids)
    assert len(report.memory_ids) == 4 + 2
    assert report.memory_candidates >= 4 + 2
    assert report.memory_candidates == len(
        {*report.memory_ids}
        | {hit.memory.id for hit in alice.search_memories("What is the codename?", k=8)}
    )


def test_an_expired_memory_from_a_broken_filter_is_left_out_and_reported(
    memory: convmem.Memory, alice: convmem.Scope, monkeypatch: pytest.MonkeyPatch
) -> None:
    past = datetime.now(UTC) - timedelta(days=1)
    stale = alice.remember("My hotel is the Grand Lyon.", expires_at=past).memory
    fresh = alice.remember("My seat is 42A.").memory
    assert stale is not None and fresh is not None
    conv = alice.create_conversation()
    healthy = conv.assemble("Where do I stay?", model=PROFILE).report
    assert healthy.memory_ids == [fresh.id] and healthy.expired_memory_ids == []

    # a deliberately broken build: the store's expiry filter dropped (whichever backend)
    with memory.store.read() as tx:
        txn_class = type(tx)
    original = txn_class.list_memories

    def unfiltered(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["unexpired_at"] = None
        return original(self, *args, **kwargs)

    monkeypatch.setattr(txn_class, "list_memories", unfiltered)
    broken = conv.assemble("Where do I stay?", model=PROFILE)
    assert broken.report.expired_memory_ids == [stale.id]
    assert broken.report.memory_ids == [fresh.id]
    assert "Grand Lyon" not in str(broken.messages)


def test_the_summary_used_has_its_age_and_version(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    small_talk(conv, 40)  # far beyond the window: the decision is evicted and summarised
    report = conv.assemble("What did we decide?", model=SMALL).report
    assert report.summary_id is not None and report.summary_source == "built"
    assert report.summary_version == EXTRACTIVE_VERSION
    assert report.summary_age_seconds is not None and 0 <= report.summary_age_seconds < 60
    again = conv.assemble("What did we decide?", model=SMALL).report
    assert again.summary_source == "stored" and again.summary_id == report.summary_id
    assert again.summary_age_seconds is not None
    assert again.summary_age_seconds >= report.summary_age_seconds
    no_summary = alice.create_conversation().assemble("Hi", model=PROFILE).report
    assert no_summary.summary_age_seconds is None and no_summary.summary_version is None
