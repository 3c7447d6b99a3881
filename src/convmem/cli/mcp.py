"""``convmem mcp``: the MCP server over stdio (one configured user) or HTTP (API keys)."""

from __future__ import annotations

import logging
import sys

import click

from convmem.cli.common import fail, opened
from convmem.cli.config import Setup, flags_of, settings_options, setup
from convmem.errors import BackendUnavailable, InvalidInput

_INSTALL = "the MCP server needs the mcp extra: pip install 'convmem[mcp]'"


@click.command("mcp")
@settings_options
@click.option("--tenant", help="Tenant the stdio server acts for.")
@click.option("--user", help="User the stdio server acts for.")
@click.option("--http", "over_http", is_flag=True,
              help="Serve streamable HTTP at /mcp behind API keys instead of stdio.")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP interface.")
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP port.")
def mcp_command(
    config_path: str | None,
    db: str | None,
    embedder: str | None,
    reranker: str | None,
    tenant: str | None,
    user: str | None,
    over_http: bool,
    host: str,
    port: int,
) -> None:
    """Serve memory and conversations to MCP clients (Claude Desktop, Cursor, VS Code).

    Over stdio the server acts for --tenant/--user; over --http each request's API key
    (Authorization: Bearer cmk_…, and X-Convmem-User for an application key) decides."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        fail(BackendUnavailable(_INSTALL))
    # stdout carries the protocol over stdio: every log line goes to stderr
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if over_http and (tenant or user):
        fail(InvalidInput("over --http the API key names the tenant and user"))
    opens = setup(config_path, flags_of(db, embedder, reranker), creates=True)
    if over_http:
        _serve_http(opens, host, port)
        return
    if not tenant or not user:
        fail(InvalidInput("the stdio server acts for one user: pass --tenant and --user"))
    from convmem.mcp import build_server, fixed_scope

    with opened(opens.db, opens.config, opens.embedder, opens.reranker, opens.session) as memory:
        scope = memory.scope(tenant, user)
        build_server(fixed_scope(scope)).run("stdio")


def _serve_http(opens: Setup, host: str, port: int) -> None:
    import uvicorn

    from convmem.mcp.http import http_app

    with opened(opens.db, opens.config, opens.embedder, opens.reranker, opens.session) as memory:
        app = http_app(memory, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                access_log=False, server_header=False)  # fmt: skip
        uvicorn.Server(config).run()
