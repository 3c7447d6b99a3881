"""The command line's database and listings: a mistyped --db is refused (only commands that may
start a database create one), CONVMEM_DB stands in for --db everywhere, empty listings say so."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main

# keys create, the servers (serve, mcp) and the imports may start a database; the demo writes a
# fresh one where it is told
CREATES = {("keys", "create"), ("serve",), ("mcp",), ("import", "openai-chat"),
           ("import", "mem0"), ("demo",)}  # fmt: skip


def _commands_with_db(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(command, click.Group):
        return [
            found
            for name, sub in command.commands.items()
            for found in _commands_with_db(sub, (*path, name))
        ]
    return [path] if any(p.name == "db" for p in command.params) else []


DB_COMMANDS = _commands_with_db(main)


def _other_required(path: tuple[str, ...]) -> list[str]:
    """Values for a command's other required parameters, so only the database can be wrong."""
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    args: list[str] = []
    for param in command.params:
        if not param.required or param.name == "db":
            continue
        value = param.type.choices[0] if isinstance(param.type, click.Choice) else "x"
        if isinstance(param, click.Option):
            args += [param.opts[0], str(value)]
        else:
            args.append(str(value))
    return args


def test_every_command_with_a_database_is_covered() -> None:
    assert len(DB_COMMANDS) >= 14
    assert set(DB_COMMANDS) >= CREATES


@pytest.mark.parametrize("path", [p for p in DB_COMMANDS if p not in CREATES], ids=" ".join)
def test_a_mistyped_db_is_refused_and_not_created(path: tuple[str, ...], tmp_path: Path) -> None:
    missing = tmp_path / "convmme.db"
    rest = _other_required(path)
    for db, env in (
        (str(missing), {}),
        (f"sqlite:///{missing}", {}),
        (str(missing), {"CONVMEM_DB": str(missing)}),  # the variable is read by every command
    ):
        given = [] if env else ["--db", db]
        result = CliRunner().invoke(main, [*path, *given, *rest], env=env)
        assert result.exit_code == 2, (path, result.output)
        assert f"error: no such database: {db}" in result.output
        assert list(tmp_path.iterdir()) == []


def test_convmem_db_is_honoured_by_reading_commands(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        mem.scope("acme", "alice").create_conversation(title="Trip")
        mem.scope("acme", "alice").remember("I prefer aisle seats.")
    runner = CliRunner(env={"CONVMEM_DB": str(db_path)})
    who = ["--tenant", "acme", "--user", "alice"]
    listed = runner.invoke(main, ["conversations", "list", *who])
    assert listed.exit_code == 0 and "Trip" in listed.output
    memories = runner.invoke(main, ["memory", "list", *who])
    assert memories.exit_code == 0 and "I prefer aisle seats." in memories.output
    # --db wins over the variable
    other = runner.invoke(
        main, ["conversations", "list", "--db", str(db_path.with_name("x.db")), *who]
    )
    assert other.exit_code == 2 and "no such database" in other.output


def test_keys_create_may_start_a_database_from_convmem_db(tmp_path: Path) -> None:
    fresh = tmp_path / "new.db"
    runner = CliRunner(env={"CONVMEM_DB": str(fresh)})
    created = runner.invoke(main, ["keys", "create", "--tenant", "acme", "--role", "app"])
    assert created.exit_code == 0, created.output
    assert fresh.exists()
    listed = runner.invoke(main, ["keys", "list", "--tenant", "acme"])
    assert listed.exit_code == 0 and " app " in listed.output


def test_a_user_key_without_user_is_refused_and_writes_nothing(db_path: Path) -> None:
    with convmem.open(db_path):
        pass
    result = CliRunner().invoke(
        main, ["keys", "create", "--db", str(db_path), "--tenant", "acme", "--role", "user"]
    )
    assert result.exit_code == 2
    assert "--user is required for a user key" in result.output
    with convmem.open(db_path) as mem:
        assert mem.keys.list("acme") == []


def test_empty_listings_print_none(db_path: Path) -> None:
    with convmem.open(db_path) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
    db = ["--db", str(db_path)]
    who = [*db, "--tenant", "acme", "--user", "alice"]
    for args in (
        ["conversations", "list", "--tenant", "acme", "--user", "bob", *db],
        ["memory", "list", *who],
        ["summaries", "list", *who, conv.id],
        ["jobs", "list", *db],
        ["keys", "list", *db, "--tenant", "acme"],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert result.output == "(none)\n", args
