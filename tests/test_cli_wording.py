"""Each way a command is commonly misused ends in one clear line on stderr and exit code 2,
naming what is wrong (a path, a position in a file), never a bare exception name."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_memory_delete_without_an_id_says_what_to_give(db_path: Path) -> None:
    convmem.open(db_path).close()
    result = CliRunner().invoke(
        main, ["memory", "delete", "--db", str(db_path), "--tenant", "a", "--user", "u"]
    )
    assert result.exit_code == 2
    assert "give the MEMORY_ID to delete" in result.output
    assert "not both" not in result.output


def test_memory_delete_with_an_id_and_everything_says_not_both(db_path: Path) -> None:
    convmem.open(db_path).close()
    result = CliRunner().invoke(
        main,
        ["memory", "delete", "--db", str(db_path), "--tenant", "a", "--user", "u", "mem_x",
         "--everything", "--yes"],
    )  # fmt: skip
    assert result.exit_code == 2 and "not both" in result.output


def test_keys_create_in_a_missing_folder_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "typo" / "deeper" / "convmem.db"
    result = CliRunner().invoke(
        main, ["keys", "create", "--db", str(db), "--tenant", "a", "--role", "app"]
    )
    assert result.exit_code == 2
    assert _error_lines(result.output) == [
        f"error: no such folder: {db.parent} (create it first to start a database there)"
    ]
    assert not (tmp_path / "typo").exists()


def test_a_database_path_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    with pytest.raises(convmem.StoreError, match=f"cannot open the database file {folder}"):
        convmem.open(folder)
    result = CliRunner().invoke(
        main, ["keys", "create", "--db", str(folder), "--tenant", "a", "--role", "app"]
    )
    assert result.exit_code == 2
    assert str(folder) in result.output and "SQLITE_CANTOPEN" in result.output


@pytest.mark.parametrize(
    ("command", "what"),
    [
        (["import", "mem0", "--user", "u"], "a Mem0 export"),
        (["import", "openai-chat", "--user", "u"], "a ChatGPT export"),
        (["tools", "register"], "tools"),
    ],
)
def test_a_file_that_is_not_json_says_where(
    command: list[str], what: str, db_path: Path, tmp_path: Path
) -> None:
    convmem.open(db_path).close()
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"text": "I like tea"\n', encoding="utf-8")
    result = CliRunner().invoke(
        main, [*command[:2], "--db", str(db_path), "--tenant", "a", *command[2:], str(bad)]
    )
    assert result.exit_code == 2
    (line,) = _error_lines(result.output)
    assert line.startswith(f"error: cannot read {what} from {bad}: not valid JSON (line 3")
    assert "JSONDecodeError" not in line and "tea" not in line


def test_a_file_that_is_not_there_says_so(db_path: Path, tmp_path: Path) -> None:
    convmem.open(db_path).close()
    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(
        main, ["tools", "register", "--db", str(db_path), "--tenant", "a", str(missing)]
    )
    assert result.exit_code == 2
    assert _error_lines(result.output) == [f"error: cannot read tools from {missing}: no such file"]


def test_serve_on_a_busy_port_prints_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "convmem.cli.main", "serve", "--db", str(tmp_path / "s.db"),
             "--port", str(port)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert run.returncode == 2
    assert run.stdout == ""
    assert _error_lines(run.stderr) == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
