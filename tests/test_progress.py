"""Progress of the long rebuilds: a callback in the API, a display in the CLI."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.retrieval.vector import HashingEmbedder


def write_turns(db_path: Path, count: int, config: convmem.Config | None = None) -> None:
    embedder = HashingEmbedder() if config else None
    with convmem.open(db_path, config=config, embedder=embedder) as mem:
        alice = mem.scope("acme", "alice")
        conv = alice.create_conversation()
        for i in range(count):
            conv.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the harbour tour")
        alice.remember("I like quokkas.")


def test_backfill_reports_each_batch_to_the_callback(db_path: Path) -> None:
    write_turns(db_path, 10, convmem.Config(embed_on_write=False))
    calls: list[tuple[str, int]] = []
    with convmem.open(db_path, embedder=HashingEmbedder()) as mem:
        counts = mem.backfill_embeddings(batch_size=4, progress=lambda k, n: calls.append((k, n)))
    assert [n for k, n in calls if k == "messages"] == [4, 8, 10]
    assert calls[-1] == ("memories", 1)
    for kind in ("messages", "terms", "memories"):
        assert [n for k, n in calls if k == kind][-1] == counts[kind]


def test_reindex_reports_each_batch_to_the_callback(db_path: Path) -> None:
    write_turns(db_path, 7)
    with sqlite3.connect(db_path) as db:  # the index is derived: drop it
        db.execute("DELETE FROM message_index")
    calls: list[tuple[str, int]] = []
    with convmem.open(db_path) as mem:
        assert mem.reindex(batch_size=3, progress=lambda k, n: calls.append((k, n))) == 7
    assert calls == [("messages", 3), ("messages", 6), ("messages", 7)]


def test_the_commands_show_progress_and_the_totals(db_path: Path) -> None:
    write_turns(db_path, 6, convmem.Config(embed_on_write=False))
    runner = CliRunner()
    filled = runner.invoke(
        main, ["backfill", "--db", str(db_path), "--embedder", "hashing", "--batch-size", "4"]
    )
    assert filled.exit_code == 0, filled.output
    assert "embedded messages: 4" in filled.output and "embedded messages: 6" in filled.output
    assert filled.output.splitlines()[-1].startswith("6 messages, ")
    again = runner.invoke(main, ["backfill", "--db", str(db_path), "--embedder", "hashing"])
    assert again.output.splitlines()[-1].startswith("0 messages, ")  # nothing missing
    refreshed = runner.invoke(
        main, ["backfill", "--db", str(db_path), "--embedder", "hashing", "--refresh"]
    )
    assert refreshed.exit_code == 0, refreshed.output
    assert refreshed.output.splitlines()[-1].startswith("6 messages, ")  # each embedded again
    with sqlite3.connect(db_path) as db:
        db.execute("DELETE FROM message_index")
    rebuilt = runner.invoke(main, ["reindex", "--db", str(db_path), "--batch-size", "4"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert rebuilt.output.splitlines()[-1].startswith("indexed ")
