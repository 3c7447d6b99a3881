"""convmem as an MCP server (the ``mcp`` extra): ``convmem mcp`` over stdio or streamable HTTP.

``build_server(scope_of)`` makes the server; ``fixed_scope`` serves one configured user (stdio);
``http_app`` serves the users of API keys (HTTP).
"""

from convmem.mcp.server import ScopeOf, build_server, fixed_scope

__all__ = ["ScopeOf", "build_server", "fixed_scope"]
