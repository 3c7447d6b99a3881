"""Run the service on uvicorn, with JSON logs and a graceful shutdown."""

from __future__ import annotations

from dataclasses import replace

import uvicorn

from convmem.engine import open as open_memory
from convmem.retrieval.vector import Embedder
from convmem.service.app import ServiceSettings, create_app
from convmem.service.observability import configure_logging


def serve(
    db: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    settings: ServiceSettings | None = None,
    log_level: str = "info",
    graceful_timeout: int = 30,
    keep_alive_timeout: int = 75,
    embedder: Embedder | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM. On a signal uvicorn stops accepting connections, lets the
    requests in flight (writes included) finish for up to ``graceful_timeout`` seconds, then the
    app closes the database. With an ``embedder`` the model loads before the port opens, so the
    first search does not wait for it."""
    configure_logging(log_level)
    if embedder is not None:
        embedder.embed(["warm up"])
    memory = open_memory(db, embedder=embedder)
    base = settings or ServiceSettings()
    app = create_app(memory, replace(base, close_memory_on_shutdown=True))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,  # configure_logging already routes uvicorn's own log as JSON
        access_log=False,  # uvicorn's access line holds the raw query string: ours does not
        server_header=False,
        timeout_graceful_shutdown=graceful_timeout,
        # longer than clients' and proxies' idle timeouts, so the server never closes a pooled
        # connection just as a client sends on it
        timeout_keep_alive=keep_alive_timeout,
    )
    uvicorn.Server(config).run()
