"""``convmem tools``: register a file of tools, list them, delete one; refusals write nothing."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main

REGISTRY = Path(__file__).resolve().parent / "data" / "tool_registry.json"


def test_register_list_and_delete(db_path: Path, tmp_path: Path) -> None:
    convmem.open(db_path).close()
    runner = CliRunner()
    at = ["--db", str(db_path), "--tenant", "acme"]
    made = runner.invoke(main, ["tools", "register", *at, "--embedder", "hashing", str(REGISTRY)])
    assert made.exit_code == 0, made.output
    count = len(json.loads(REGISTRY.read_text())["tools"])
    assert made.output.count("registered ") == count
    assert "registered refund_order (high)" in made.output
    listed = runner.invoke(main, ["tools", "list", *at, "--json"])
    assert listed.exit_code == 0
    assert len(json.loads(listed.output)) == count
    single = tmp_path / "one.json"
    single.write_text(json.dumps({"name": "find_train", "description": "Trains."}))
    one = runner.invoke(main, ["tools", "register", *at, "--risk", "medium", str(single)])
    assert one.exit_code == 0 and "registered find_train (medium)" in one.output
    deleted = runner.invoke(main, ["tools", "delete", *at, "find_train"])
    assert deleted.exit_code == 0
    missing = runner.invoke(main, ["tools", "delete", "--db", str(db_path), "--tenant", "globex",
                                   "get_weather"])  # fmt: skip
    assert missing.exit_code == 2 and "not found" in missing.output
    with convmem.open(db_path) as mem:
        names = [t.name for t in mem.tools.list("acme")]
    assert len(names) == count and "find_train" not in names


def test_a_bad_file_registers_nothing(db_path: Path, tmp_path: Path) -> None:
    convmem.open(db_path).close()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "ok_tool"}, {"name": "not a name"}]))
    result = CliRunner().invoke(main, ["tools", "register", "--db", str(db_path), "--tenant",
                                       "acme", "--embedder", "none", str(bad)])  # fmt: skip
    assert result.exit_code == 2 and "error:" in result.output
    with convmem.open(db_path) as mem:
        assert mem.tools.list("acme") == []
