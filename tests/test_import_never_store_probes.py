"""The CLI's ``import mem0`` meets the same gate (session 41's adversarial pass): disguised
secrets in an export — invisible separators, a combining mark, JSON u-escapes, base64 — are
reported blocked by id, never echoed, and no byte of them reaches the SQLite file; a secret in a
record's metadata is not kept at all."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from click.testing import CliRunner

import convmem
from convmem.cli.main import main

VALUE = "Falcon!9921"
RECORDS = [
    {"id": "zw", "memory": f"My\u200bpassword\u200bis\u200b{VALUE}", "user_id": "dan"},
    {"id": "mark", "memory": f"My pa\u0301ssword is {VALUE}", "user_id": "dan"},
    {"id": "esc", "user_id": "dan",
     "memory": "".join(f"\\u{ord(c):04x}" for c in f"my password is {VALUE}")},
    {"id": "b64", "user_id": "dan",
     "memory": base64.b64encode(f"my password is {VALUE}".encode()).decode()},
    {"id": "ok", "memory": "Prefers aisle seats", "user_id": "dan",
     "metadata": {"note": f"my password is {VALUE}"}},
]  # fmt: skip


def test_the_cli_import_blocks_every_disguise_and_keeps_no_byte(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(RECORDS))
    db = tmp_path / "new.db"
    done = CliRunner().invoke(main, ["import", "mem0", "--db", str(db), "--tenant", "acme",
                                     "--as-named", str(path)])  # fmt: skip
    assert done.exit_code == 0, done.output
    for ident in ("zw", "mark", "esc", "b64"):
        assert f"blocked {ident}: credential" in done.output
    assert "Falcon" not in done.output
    with convmem.open(db) as memory:
        texts = [m.text for m in memory.scope("acme", "dan").memories.list(status=None)]
    assert texts == ["Prefers aisle seats"]
    for file in tmp_path.iterdir():
        if file.name.startswith("new.db"):
            assert b"Falcon" not in file.read_bytes()
