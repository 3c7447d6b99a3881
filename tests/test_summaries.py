"""Rolling summaries on real SQLite: recall after eviction, keys by branch, supersession,
deletion, validation at use, the threshold and the hot path's bounded walk."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import convmem
from convmem import AssemblyOptions, ModelProfile
from convmem.content.blocks import quote_data
from convmem.summarize import SummaryRecord
from convmem.summarize.render import HEADER

SMALL = ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")
SUBJECTS = ["tea", "jazz", "rivers", "chess", "clouds", "bicycles", "owls", "bread", "maps"]

DECISION = "Decision: we'll use PostgreSQL 16 for the orders database."
CONSTRAINT = "Constraint: the API must answer within 250 ms at p95."
TASK = "TODO: migrate the `orders_v2` table before release 3.4."


def chat(conv: convmem.Conversation, turns: int, *, start: int = 0, assemble: bool = False) -> None:
    """Unrelated small talk, optionally assembled turn by turn like an app would."""
    for i in range(start, start + turns):
        subject = SUBJECTS[i % len(SUBJECTS)]
        conv.append("user", f"Turn {i}: tell me something nice about {subject}.")
        if assemble:
            conv.assemble(None, model=SMALL)
        conv.append(
            "assistant",
            f"Here is a pleasant thought about {subject}: people have enjoyed them for ages, "
            f"and there is always more to discover about {subject} on a quiet afternoon.",
        )


def summary_message(ctx: convmem.AssembledContext) -> str:
    found = [m["content"] for m in ctx.messages if m["role"] == "system" and HEADER in m["content"]]
    assert len(found) == 1, "exactly one summary section"
    return str(found[0])


def test_decision_constraint_and_task_are_recalled_after_200_turns(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    decision = conv.append("user", DECISION)
    conv.append("assistant", "Noted, PostgreSQL 16 it is.")
    constraint = conv.append("user", CONSTRAINT)
    conv.append("assistant", "Understood.")
    task = conv.append("user", TASK)
    conv.append("assistant", "I will keep that on the list.")
    chat(conv, 200, assemble=True)

    ctx = conv.assemble("What did we settle on, and what is still open?", model=SMALL)
    report = ctx.report
    assert decision.id in report.evicted_ids or report.evicted_count > 300
    assert decision.id not in report.included_ids
    text = summary_message(ctx)
    assert f"{quote_data(DECISION)} [{decision.id}]" in text
    assert f"{quote_data(CONSTRAINT)} [{constraint.id}]" in text
    assert f"{quote_data(TASK)} [{task.id}]" in text
    assert report.summary_id is not None
    assert report.sections["summary"] > 0
    assert report.total_tokens <= SMALL.input_budget
    # the summary runs through the message right before the window
    first_kept = conv.message(report.included_ids[0])
    assert report.summary_through_id == first_kept.parent_id
    # and the snapshot's notes point at their proofs
    record = conv.summary()
    assert record is not None
    assert record.id == report.summary_id
    by_text = {item.text: item.sources for _, item in record.snapshot.items()}
    assert by_text[DECISION] == (decision.id,)
    assert by_text[CONSTRAINT] == (constraint.id,)
    assert by_text[TASK] == (task.id,)


def test_consecutive_turns_reuse_one_summary_and_keep_the_prefix(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 40)
    reports = []
    for i in range(40, 80):
        conv.append("user", f"Turn {i}: anything about {SUBJECTS[i % 9]}?")
        reports.append(conv.assemble(None, model=SMALL).report)
        conv.append("assistant", f"Something kind about {SUBJECTS[i % 9]} and its long history.")
    summaries = [r.summary_id for r in reports]
    changes = sum(1 for a, b in itertools.pairwise(summaries) if a != b)
    assert None not in summaries
    assert changes <= len(reports) // 4  # rebuilt once per block, not every turn
    sources = [r.summary_source for r in reports]
    assert sources.count("built") == len(set(summaries))
    assert sources.count("stored") == len(reports) - len(set(summaries))
    # between rebuilds the prefix (system, pins, summary) is byte-identical
    same_summary = [(a, b) for a, b in itertools.pairwise(reports) if a.summary_id == b.summary_id]
    assert all(a.stable_prefix_hash == b.stable_prefix_hash for a, b in same_summary)
    assert all(a.included_ids[0] == b.included_ids[0] for a, b in same_summary)


def test_summaries_roll_from_the_nearest_ancestor(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 120, assemble=True)
    records = conv.summaries()
    assert len(records) >= 3
    by_id = {r.id: r for r in records}
    latest = records[-1]
    assert latest.previous_id in by_id
    previous = by_id[latest.previous_id]
    # each summary re-read only the turns after its ancestor
    assert latest.segment_length == latest.through_depth - previous.through_depth
    assert DECISION in latest.rendered


def test_the_threshold_evicts_at_70_percent_and_summaries_can_be_off(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    # recall off on both sides: its held room would shrink the window the threshold is about
    summarised = AssemblyOptions(retrieved_k=0)
    plain = AssemblyOptions(summary_threshold=None, retrieved_k=0)
    previous_history = 0
    for i in range(60):
        chat(conv, 1, start=i)
        on = conv.assemble("next?", model=SMALL, options=summarised)
        off = conv.assemble("next?", model=SMALL, options=plain)
        if on.report.evicted_ids:
            break
        previous_history = off.report.sections["history"]
    else:
        pytest.fail("the history never reached the threshold")
    room, budget = on.report.history_budget, off.report.history_budget
    assert 0.65 * budget <= room <= 0.7 * budget  # 70 % of the budget, less the fixed parts
    assert previous_history <= room < off.report.sections["history"]  # triggered on crossing it
    assert off.report.evicted_ids == []  # without summaries it would all still fit
    assert on.report.summary_id is not None
    assert DECISION in summary_message(on)
    assert off.report.summary_id is None


def test_an_edit_at_turn_3_starts_a_branch_without_the_old_summary(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", "Turn 1: hello there.")
    conv.append("assistant", "Hello!")
    conv.append("user", "Turn 2: how are you?")
    conv.append("assistant", "Fine, thanks.")
    third = conv.append("user", "Turn 3: " + DECISION)
    conv.append("assistant", "Noted.")
    chat(conv, 40, assemble=True)
    old_leaf = conv.record().active_leaf_id
    assert old_leaf is not None
    old = conv.assemble("continue", model=SMALL)
    assert old.report.summary_id is not None
    assert "PostgreSQL 16" in summary_message(old)

    edited = conv.edit(third.id, "Turn 3: Decision: we'll use MariaDB 11 for the orders database.")
    fresh = conv.assemble("continue", model=SMALL)
    assert fresh.report.summary_id is None  # the new branch is short: nothing to summarise
    assert edited.id in fresh.report.included_ids
    chat(conv, 40, start=100, assemble=True)
    grown = conv.assemble("continue", model=SMALL)
    old_path = {m.id for m in conv.branch(old_leaf)}
    new_path = {m.id for m in conv.branch()}
    record = conv.summary()
    assert record is not None
    assert record.id == grown.report.summary_id
    assert record.through_message_id not in old_path
    assert record.snapshot.source_ids() <= new_path
    text = summary_message(grown)
    assert "MariaDB 11" in text
    assert "PostgreSQL 16" not in text

    again = conv.assemble("continue", model=SMALL, leaf_id=old_leaf)  # the old branch still does
    assert again.report.summary_id == old.report.summary_id
    assert again.report.summary_source == "stored"


def test_no_reuse_across_branches_that_diverge_inside_the_covered_range(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 1)
    fork_user = conv.append("user", "Turn 1: Let's use Redis streams for the job queue.")
    conv.append("assistant", "Redis streams, noted.")
    chat(conv, 50, start=6, assemble=True)
    branch_a = {m.id for m in conv.branch()}
    summaries_a = conv.summaries()
    deepest_a = max(r.through_depth for r in summaries_a)
    assert fork_user.depth < min(r.through_depth for r in summaries_a)  # inside every summary

    conv.edit(fork_user.id, "Turn 1: Let's use RabbitMQ 3.13 for the job queue.")
    chat(conv, 60, start=200, assemble=True)
    ctx = conv.assemble("continue", model=SMALL)
    branch_b = {m.id for m in conv.branch()}
    record = conv.summary()
    assert record is not None
    assert record.through_depth > deepest_a  # deeper than A's: A's were candidates, not used
    assert record.id == ctx.report.summary_id
    chain = {r.id: r for r in conv.summaries()}
    link: SummaryRecord | None = record
    while link is not None:  # the whole chain lies on branch B
        assert link.through_message_id in branch_b
        assert link.snapshot.source_ids() <= branch_b
        link = chain[link.previous_id] if link.previous_id else None
    text = summary_message(ctx)
    assert "RabbitMQ 3.13" in text
    assert "Redis streams" not in text
    assert DECISION in text  # shared history before the fork is summarised on B too
    assert {r.id for r in summaries_a} <= set(chain)  # A's summaries stay, for A
    assert all(r.through_message_id in branch_a for r in summaries_a)


def test_a_branch_forking_after_the_covered_range_reuses_the_summary(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 40, assemble=True)
    first = conv.summaries()[0]
    after = next(m for m in conv.branch() if m.depth > first.through_depth + 1 and m.role == "user")
    edited = conv.edit(after.id, "Turn X: tell me about tea, please.")
    chat(conv, 40, start=300, assemble=True)
    path_b = {m.id for m in conv.branch()}
    shared = [r for r in conv.summaries() if r.through_depth < edited.depth]
    own = [
        r
        for r in conv.summaries()
        if r.through_message_id in path_b and r.through_depth > edited.depth
    ]
    assert first in shared
    assert own
    # B's first own summary was rolled from a summary both branches share, not rebuilt
    assert own[0].previous_id in {r.id for r in shared}
    assert own[0].segment_length < own[0].through_depth


def test_deleting_a_covered_message_removes_the_summaries_built_from_it(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 2)
    fork = conv.append("user", "Turn 2b: Let's use Redis streams for the job queue.")
    conv.append("assistant", "Noted.")
    secret = conv.append("user", "Decision: we'll use the codename BLUEFIN-7 for the launch.")
    conv.append("assistant", "BLUEFIN-7 it is.")
    chat(conv, 50, start=10, assemble=True)
    leaf_a = conv.record().active_leaf_id
    conv.edit(fork.id, "Turn 2b: Let's use Kafka for the job queue.")
    chat(conv, 50, start=100, assemble=True)
    leaf_b = conv.record().active_leaf_id
    before = conv.summaries()
    covers = {r.id: {m.id for m in conv.branch(r.through_message_id)} for r in before}
    assert any(secret.id in ids for ids in covers.values())
    assert any(secret.id not in ids for ids in covers.values())

    conv.switch_branch(leaf_a or "")
    deleted = set(conv.delete_message(secret.id))
    after = {r.id for r in conv.summaries()}
    for record in before:
        assert (record.id in after) == (not covers[record.id] & deleted)
    assert all("BLUEFIN-7" not in r.rendered for r in conv.summaries())
    # the branch that never held it keeps its summary and still uses it
    ctx_b = conv.assemble("continue", model=SMALL, leaf_id=leaf_b)
    assert ctx_b.report.summary_source == "stored"
    # the cut branch rebuilds lazily, without the deleted message
    chat(conv, 40, start=400, assemble=True)
    ctx_a = conv.assemble("continue", model=SMALL)
    assert ctx_a.report.summary_id is not None
    assert "BLUEFIN-7" not in summary_message(ctx_a)
    assert DECISION in summary_message(ctx_a)


def test_a_long_run_is_queued_for_the_worker_instead_of_built_inline(db_path: Path) -> None:
    from convmem.ops.worker import Worker

    config = convmem.Config(max_inline_summary_messages=50, summary_segment_messages=40)
    with convmem.open(db_path, config=config) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        conv.append("user", DECISION)
        chat(conv, 60)  # never assembled: the first summary would read over 100 turns
        ctx = conv.assemble("continue", model=SMALL)
        assert ctx.report.evicted_ids
        assert ctx.report.summary_id is None  # truncation only, the request did not wait
        jobs = memory.jobs()
        assert [job.status for job in jobs] == ["pending"]
        conv.assemble("continue", model=SMALL)
        assert len(memory.jobs()) == 1  # idempotent: the same key is queued once

        assert Worker(memory).run(exit_when_idle=True) == 1
        assert [job.status for job in memory.jobs()] == ["done"]
        records = conv.summaries()
        assert len(records) >= 3  # built in segments of at most 40 messages
        assert max(r.segment_length for r in records) <= 40
        ctx = conv.assemble("continue", model=SMALL)
        assert ctx.report.summary_source == "stored"
        assert DECISION in summary_message(ctx)


def test_rolling_drops_a_completed_task_and_replaces_a_superseded_decision(
    alice: convmem.Scope,
) -> None:
    conv = alice.create_conversation()
    task = "TODO: write the migration for orders_v2."
    conv.append("user", task)
    conv.append("user", DECISION)
    chat(conv, 30, assemble=True)
    early = conv.summary()
    assert early is not None
    assert task in [i.text for i in early.snapshot.open_tasks]
    assert DECISION in [i.text for i in early.snapshot.decisions]

    conv.append("user", "I've written the migration for orders_v2, so that one is done.")
    switch = conv.append("user", "Change of plan: we'll use SQLite 3.45 for the orders database.")
    chat(conv, 30, start=50, assemble=True)
    ctx = conv.assemble("status?", model=SMALL)
    late = conv.summary()
    assert late is not None
    assert late.id == ctx.report.summary_id
    assert late.through_depth > switch.depth
    assert late.snapshot.open_tasks == ()
    decisions = late.snapshot.decisions
    assert [d.text for d in decisions] == [switch.content]
    assert decisions[0].sources == (switch.id,)
    text = summary_message(ctx)
    assert "PostgreSQL" not in text
    assert "orders_v2" not in text


def test_the_summary_leads_the_anthropic_system_blocks(alice: convmem.Scope) -> None:
    conv = alice.create_conversation()
    conv.append("user", DECISION)
    chat(conv, 30)
    ctx = conv.assemble("continue", model=SMALL, system="Be brief.", format="anthropic")
    assert ctx.system is not None
    assert ctx.system[0]["text"] == "Be brief."
    assert DECISION in ctx.system[1]["text"]
    assert ctx.report.summary_id is not None
    assert all(m["role"] in ("user", "assistant") for m in ctx.messages)
