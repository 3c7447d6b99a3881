"""``convmem embedder switch`` / ``status`` / ``cancel``, run as an operator would on a
database a service wrote with one embedder."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main


def _written(db_path: Path) -> str:
    with convmem.open(db_path, embedder=convmem.HashingEmbedder(256)) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        for i in range(5):
            conv.append("user", f"the crate zorblat{i} went to the harbour")
        alice.remember("My locker word is zorblat9.")
        assert memory.wait_for_vectors(30)
        return conv.id


def test_the_cli_switches_a_tenant_and_reports_each_step(db_path: Path) -> None:
    conversation = _written(db_path)
    runner = CliRunner()
    db = ["--db", str(db_path)]
    before = runner.invoke(main, ["embedder", "status", *db, "--tenant", "acme"])
    assert before.exit_code == 0, before.output
    assert "switch: none under way" in before.output
    built = runner.invoke(
        main, ["embedder", "switch", "hashing:64", *db, "--tenant", "acme", "--build-only"]
    )
    assert built.exit_code == 0, built.output
    during = runner.invoke(main, ["embedder", "status", *db, "--tenant", "acme"])
    assert "building: hashing-64 (ready)" in during.output, during.output
    assert "turns: 5 built, 0 left" in during.output
    assert "memories: 1 built, 0 left" in during.output
    done = runner.invoke(main, ["embedder", "switch", "hashing:64", *db, "--tenant", "acme"])
    assert done.exit_code == 0, done.output
    assert "acme now uses hashing-64" in done.output
    after = runner.invoke(main, ["embedder", "status", *db, "--tenant", "acme"])
    assert "active: hashing-64" in after.output and "switch: none under way" in after.output
    with convmem.open(db_path, embedder=convmem.HashingEmbedder(64)) as memory:
        with memory.store.read() as tx:  # every vector of the tenant is the new one's
            assert tx.missing_message_vectors("hashing-64", 100) == []
            assert tx.embedded_message_vectors("hashing-256", 0, 100) == []
        conv = memory.scope("acme", "alice").conversation(conversation)
        assert [h.message.content for h in conv.search("zorblat3", k=1)] == [
            "the crate zorblat3 went to the harbour"
        ]


def test_the_cli_refuses_a_switch_to_no_embedder(db_path: Path) -> None:
    _written(db_path)
    result = CliRunner().invoke(
        main, ["embedder", "switch", "none", "--db", str(db_path), "--tenant", "acme"]
    )
    assert result.exit_code == 2
    assert "not 'none'" in result.output
