"""The command line, run as a user would: the demo, inspection, help on every command."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main


def test_demo_plays_sixty_turns_with_tool_stub_and_edit() -> None:
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    turns = [line for line in lines if line[:4].strip().isdigit()]
    assert len(turns) == 60
    assert any("stubbed" in line for line in turns)
    assert any("edited" in line for line in turns)
    assert any("evicted" in line for line in turns)
    assert any("tool call" in line for line in turns)
    # two pasted screenshots: counted as image tokens, the older one stubbed once a newer came
    assert sum("screenshot" in line for line in turns) == 2
    assert any("image tokens" in line for line in turns)
    assert any("stubbed 1 older image" in line for line in turns)


def test_conversations_list_and_show(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation(title="Trip")
        q = conv.append("user", "first question")
        conv.append("assistant", "first answer")
        conv.edit(q.id, "edited question")
    runner = CliRunner()
    listed = runner.invoke(
        main, ["conversations", "list", "--db", str(db_path), "--tenant", "acme", "--user", "alice"]
    )
    assert listed.exit_code == 0
    assert conv.id in listed.output
    assert "Trip" in listed.output
    shown = runner.invoke(
        main,
        [
            "conversations",
            "show",
            "--db",
            str(db_path),
            "--tenant",
            "acme",
            "--user",
            "alice",
            conv.id,
        ],
    )
    assert shown.exit_code == 0
    assert "* " in shown.output
    assert "edited question" in shown.output
    assert "first answer" in shown.output
    other = runner.invoke(
        main,
        [
            "conversations",
            "show",
            "--db",
            str(db_path),
            "--tenant",
            "acme",
            "--user",
            "bob",
            conv.id,
        ],
    )
    assert other.exit_code == 2
    assert "not found" in other.output


def test_every_command_has_help() -> None:
    def walk(command: click.Command, path: list[str]) -> None:
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, path
        assert command.help or command.short_help, f"{path} has no description"
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])

    walk(main, [])


def test_memory_list_export_delete(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        scope = mem.scope("acme", "alice")
        notice = scope.remember("I prefer aisle seats.")
        assert notice.memory is not None
        scope.create_conversation().append("user", "hello")
    runner = CliRunner()
    who = ["--db", str(db_path), "--tenant", "acme", "--user", "alice"]
    listed = runner.invoke(main, ["memory", "list", *who])
    assert listed.exit_code == 0 and "I prefer aisle seats." in listed.output
    exported = runner.invoke(main, ["memory", "export", *who])
    assert exported.exit_code == 0
    assert json.loads(exported.output)["data"]["memories"][0]["id"] == notice.memory.id
    missing = runner.invoke(main, ["memory", "delete", *who, "mem_NOPE"])
    assert missing.exit_code == 2 and "not found" in missing.output
    deleted = runner.invoke(main, ["memory", "delete", *who, notice.memory.id])
    assert deleted.exit_code == 0
    assert "aisle" not in runner.invoke(main, ["memory", "list", *who, "--all"]).output
    refused = runner.invoke(main, ["memory", "delete", *who, "--everything"], input="n\n")
    assert refused.exit_code != 0
    wiped = runner.invoke(main, ["memory", "delete", *who, "--everything", "--yes"])
    assert wiped.exit_code == 0
    with convmem.open(db_path) as mem:
        assert mem.scope("acme", "alice").conversations() == []


def test_the_demo_table_adds_up_and_leaves_no_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line.split() for line in lines if line.startswith("turn"))
    assert header[:9] == [
        "turn", "system", "summary", "history", "retrieved", "user", "other", "priming", "total",
    ]  # fmt: skip
    rows = [line.split() for line in lines if line[:4].strip().isdigit()]
    assert len(rows) == 60
    for row in rows:
        assert sum(int(cell) for cell in row[1:8]) == int(row[8]), row
    assert any(int(row[4]) > 0 for row in rows)  # recall brought evicted turns back
    assert "tokenizer o200k_base" in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_demo_keeps_a_database_it_is_given(tmp_path: Path) -> None:
    kept = tmp_path / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--turns", "5", "--db", str(kept)])
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(
        main,
        ["conversations", "list", "--db", str(kept), "--tenant", "demo", "--user", "traveller"],
    )
    assert "Lisbon trip" in listed.output
    again = CliRunner().invoke(main, ["demo", "--turns", "5", "--db", str(kept)])
    assert again.exit_code == 2 and "exists" in again.output
