"""The manual's MCP client configurations (Claude Desktop, Cursor, VS Code) are valid JSON that
say what the server takes: the stdio snippet's arguments start a server the SDK's client lists
the tools of, and the HTTP snippets' URL is the one ``convmem mcp --http`` serves by default."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from convmem.cli.main import main

MCP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "mcp.md"
LAUNCH = "from convmem.cli.main import main; main()"


def _mcp_section() -> str:
    return MCP_PAGE.read_text()


def _configs() -> list[dict[str, Any]]:
    blocks = re.findall(r"^```json\n(.*?)^```", _mcp_section(), flags=re.M | re.S)
    return [json.loads(block) for block in blocks]


def test_the_stdio_snippet_starts_a_server_the_client_lists_tools_of(tmp_path: Path) -> None:
    (stdio,) = [c for c in _configs() if "mcpServers" in c]
    server = stdio["mcpServers"]["convmem"]
    assert server["command"] == "convmem"
    args = list(server["args"])
    args[args.index("--db") + 1] = str(tmp_path / "desktop.db")  # the reader's own path
    parameters = StdioServerParameters(
        command=sys.executable, args=["-c", LAUNCH, *args], env=dict(os.environ)
    )

    async def tools() -> set[str]:
        async with Client(parameters) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert {"remember", "assemble_context", "search_conversation"} <= asyncio.run(tools())


def test_the_http_snippets_name_the_served_endpoint() -> None:
    (vscode,) = [c for c in _configs() if "servers" in c]
    server = vscode["servers"]["convmem"]
    assert server["type"] == "http"
    assert server["headers"]["Authorization"].startswith("Bearer ${input:")
    assert {i["id"] for i in vscode["inputs"]} == {"convmem-key"}
    help_text = CliRunner().invoke(main, ["mcp", "--help"]).output
    port = re.search(r"--port INTEGER\s+HTTP port.\s+\[default: (\d+)\]", help_text)
    assert port is not None
    assert server["url"] == f"http://127.0.0.1:{port.group(1)}/mcp"
    cursor = re.search(r"`(\{\"mcpServers\": \{\"convmem\": \{\"url\".*?\}\}\})`", _mcp_section(),
                       flags=re.S)  # fmt: skip
    assert cursor is not None
    inline = json.loads(cursor.group(1))["mcpServers"]["convmem"]
    assert inline["url"] == server["url"]
