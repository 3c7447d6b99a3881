"""An MCP client (the official SDK's) talking to ``convmem mcp`` over stdio.

    python examples/mcp_client.py [DB]

Starts the server as a desktop client would (``convmem mcp --db DB --tenant acme --user
alice``), lists its tools and calls them: a memory saved, one blocked by the never-store policy,
a turn appended and the context assembled for the next message.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

try:
    from mcp import Client, StdioServerParameters
except ModuleNotFoundError as missing:  # say which extra, not only which module
    raise SystemExit(
        f"this example needs the mcp extra: pip install -e '.[mcp]' ({missing})"
    ) from missing


def server_parameters(db: str) -> StdioServerParameters:
    launch = "from convmem.cli.main import main; main()"
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", launch, "mcp", "--db", db, "--tenant", "acme", "--user", "alice"],
        env=dict(os.environ),  # the SDK passes only a few variables by default
    )


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(result.content[0].text)  # type: ignore[union-attr]
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


async def main(db: str) -> None:
    async with Client(server_parameters(db)) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))

        saved = await call(client, "remember", {"text": "I prefer aisle seats."})
        print("remember ->", saved["status"], saved["memory"]["id"])
        secret = "My API key is sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"
        blocked = await call(client, "remember", {"text": secret})
        print("remember ->", blocked["status"], blocked["reason"])

        turn = await call(client, "append_turn", {"role": "user", "content": "Book me a flight."})
        conversation = turn["conversation_id"]
        await call(client, "append_turn", {"conversation_id": conversation, "role": "assistant",
                                           "content": "Where to?"})  # fmt: skip
        question = {"conversation_id": conversation, "message": "To Lisbon, Friday."}
        context = await call(client, "assemble_context", question)
        report = context["report"]
        print("assemble_context ->", len(context["messages"]), "messages,",
              report["total_tokens"], "tokens, memories", report["memory_ids"])  # fmt: skip
        listed = await call(client, "list_memories", {})
        print("list_memories ->", json.dumps([m["text"] for m in listed["memories"]]))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(folder, "mcp.db")))
