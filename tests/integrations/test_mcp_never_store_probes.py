"""The MCP server's ``remember`` tool meets the same gate (session 41's adversarial pass): a
secret split across subject and text, hidden behind invisible separators or a combining mark,
or wrapped in JSON escapes is blocked, and no byte of it reaches the SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client

import convmem
from tests.integrations.test_mcp import call, stdio

VALUE = "Falcon!9921"
PROBES: list[dict[str, Any]] = [
    {"text": VALUE, "subject": "bank password"},
    {"text": f"My\u200bpassword\u200bis\u200b{VALUE}"},
    {"text": f"My pa\u0301ssword is {VALUE}"},
    {"text": '{"n": "' + "".join(f"\\u{ord(c):04x}" for c in f"my password is {VALUE}") + '"}'},
]


async def _remember_each(db_path: Path) -> list[dict[str, Any]]:
    async with Client(stdio(db_path)) as client:
        return [await call(client, "remember", **probe) for probe in PROBES]


def test_the_remember_tool_blocks_every_disguise_and_keeps_no_byte(db_path: Path) -> None:
    answers = asyncio.run(_remember_each(db_path))
    assert [a["status"] for a in answers] == ["blocked"] * len(PROBES)
    assert {a["reason"] for a in answers} == {"credential"}
    with convmem.open(db_path) as memory:
        assert memory.scope("acme", "alice").memories.list(status=None) == []
    for path in db_path.parent.iterdir():
        if path.name.startswith(db_path.name):
            assert b"Falcon" not in path.read_bytes()
            assert "Falcon".encode("utf-16-le") not in path.read_bytes()
