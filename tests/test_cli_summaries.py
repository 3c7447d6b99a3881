"""``convmem summaries show|list``, ``convmem jobs list|retry`` and ``convmem worker --once``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main

SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")
DECISION = "Decision: we'll use PostgreSQL 16 for the orders database."
TASK = "TODO: migrate the `orders_v2` table before release 3.4."
RESULT_AT = datetime(2026, 11, 30, 10, 3, tzinfo=UTC)


def build(db_path: Path, config: convmem.Config | None = None) -> tuple[str, str, str]:
    with convmem.open(db_path, config=config) as memory:
        conv = memory.scope("acme", "alice").create_conversation()
        decision = conv.append("user", DECISION)
        task = conv.append("user", TASK)
        conv.append("assistant", "", tool_calls=[convmem.ToolCall("c1", "export_status")])
        conv.append("tool", '{"status": "done"}', tool_call_id="c1", created_at=RESULT_AT)
        for i in range(40):
            conv.append("user", f"Turn {i}: tell me something nice about tea.")
            conv.append("assistant", "Tea has been enjoyed for ages by many people.")
        conv.assemble("continue", model=SMALL)
    return conv.id, decision.id, task.id


def test_summaries_show_prints_every_note_with_the_message_it_points_to(db_path: Path) -> None:
    conv_id, decision_id, task_id = build(db_path)
    runner = CliRunner()
    scope = ["--db", str(db_path), "--tenant", "acme", "--user", "alice"]
    shown = runner.invoke(main, ["summaries", "show", *scope, conv_id])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert "Decisions:" in lines
    assert "Open tasks:" in lines
    at = lines.index(f"  - {DECISION}")
    assert lines[at + 1].startswith(f"      <- {decision_id} [user] Decision: we'll use")
    at = lines.index(f"  - {TASK}")
    assert lines[at + 1].startswith(f"      <- {task_id} [user] TODO: migrate")
    at = lines.index('  - returned: {"status": "done"}')
    assert lines[at + 1].endswith(
        ' [tool, from export_status at 2026-11-30 10:03 UTC] {"status": "done"}'
    )
    assert "summarizer extractive" in shown.output

    as_json = runner.invoke(main, ["summaries", "show", *scope, conv_id, "--json"])
    value = json.loads(as_json.output)
    assert value["snapshot"]["decisions"][0]["sources"] == [decision_id]
    assert value["sources"][decision_id]["content"] == DECISION

    listed = runner.invoke(main, ["summaries", "list", *scope, conv_id])
    assert listed.exit_code == 0
    assert "extractive" in listed.output

    other = runner.invoke(
        main,
        ["summaries", "show", "--db", str(db_path), "--tenant", "acme", "--user", "bob", conv_id],
    )
    assert other.exit_code == 2
    assert "not found" in other.output


def test_jobs_list_retry_and_worker_once(db_path: Path) -> None:
    config = convmem.Config(max_inline_summary_messages=10)  # too long to build inline: queued
    conv_id, decision_id, _ = build(db_path, config)
    runner = CliRunner()
    listed = runner.invoke(main, ["jobs", "list", "--db", str(db_path)])
    assert listed.exit_code == 0
    assert "pending" in listed.output
    assert "attempts 0/5" in listed.output
    ran = runner.invoke(main, ["worker", "--db", str(db_path), "--once"])
    assert ran.exit_code == 0, ran.output
    jobs = json.loads(runner.invoke(main, ["jobs", "list", "--db", str(db_path), "--json"]).output)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("done", 1)]
    assert jobs[0]["payload"]["through_message_id"]
    retried = runner.invoke(main, ["jobs", "retry", "--db", str(db_path), jobs[0]["id"]])
    assert retried.exit_code == 0
    assert "pending" in runner.invoke(main, ["jobs", "list", "--db", str(db_path)]).output
    missing = runner.invoke(main, ["jobs", "retry", "--db", str(db_path), "job_nope"])
    assert missing.exit_code == 2
    shown = runner.invoke(
        main,
        ["summaries", "show", "--db", str(db_path), "--tenant", "acme", "--user", "alice", conv_id],
    )
    assert decision_id in shown.output
