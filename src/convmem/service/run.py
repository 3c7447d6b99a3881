"""Run the service on uvicorn, with JSON logs and a graceful shutdown; with ``workers`` > 1,
several processes share the listening socket (each opens the database itself: meant for
PostgreSQL, where they serialise through row locks; SQLite works too, one writer at a time)."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
from dataclasses import dataclass, replace
from types import FrameType

import uvicorn

from convmem.config import Config
from convmem.engine import open as open_memory
from convmem.retrieval.rerank import Reranker
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
    workers: int = 1,
    reranker: Reranker | None = None,
    config: Config | None = None,
    session: str | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM. On a signal uvicorn stops accepting connections, lets the
    requests in flight (writes included) finish for up to ``graceful_timeout`` seconds, then the
    app closes the database. With an ``embedder`` the model loads before the port opens, so the
    first search does not wait for it. ``config``, ``reranker`` and ``session`` (the session
    tier's Redis URL): the database's (see ``convmem.open``)."""
    configure_logging(log_level)
    if embedder is not None:
        embedder.embed(["warm up"])
    # Everything loaded by now (the frameworks, the model) lives as long as the process. Frozen,
    # the collector's full passes skip it: with the model loaded they took 40-290 ms each (half
    # a million objects), a stall for every request in flight; frozen, under 1 ms. Before the
    # fork it also spares the workers' copies of those pages the collector's writes.
    gc.freeze()
    server_config = uvicorn.Config(
        "convmem",  # replaced by the app each process builds
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
    base = replace(settings or ServiceSettings(), close_memory_on_shutdown=True)
    opened = _Models(config, embedder, reranker, session)
    if workers <= 1:
        # bound here, not by uvicorn: a port in use is one OSError for the caller to report,
        # not uvicorn's log lines and an exit
        _run(db, server_config, base, opened, _listen(host, port, reuse_port=False))
        return
    # opened once here first: migrations run once, and a bad URL fails before any fork
    open_memory(db, config=config, session=session).close()
    # Where the kernel can, each worker listens on a socket of its own on the same port
    # (SO_REUSEPORT) and the kernel spreads new connections evenly over them; one socket shared
    # by every worker goes to whichever accepts first, and a client's keep-alive connections
    # then pile onto one process while another idles. The port is bound here first, so one in
    # use fails before any fork.
    per_worker = hasattr(socket, "SO_REUSEPORT")
    listener = _listen(host, port, reuse_port=per_worker)
    port = listener.getsockname()[1]  # port 0: the one the kernel chose, for every worker
    if per_worker:
        listener.close()
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: its own database connections, its socket or the shared one
            code = 0
            try:
                own = _listen(host, port, reuse_port=True) if per_worker else listener
                _run(db, server_config, base, opened, own)
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)

    def forward(signum: int, frame: FrameType | None) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for child in children:
        os.waitpid(child, 0)
    if not per_worker:
        listener.close()


def _listen(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind((host, port))
    listener.listen(2048)
    return listener


@dataclass(frozen=True)
class _Models:
    """What each process opens the database with."""

    config: Config | None
    embedder: Embedder | None
    reranker: Reranker | None
    session: str | None = None


def _run(
    db: str | None,
    server_config: uvicorn.Config,
    settings: ServiceSettings,
    models: _Models,
    listener: socket.socket | None,
) -> None:
    # "none", not None: None would let the environment pick one (convmem.open)
    memory = open_memory(
        db, config=models.config, embedder=models.embedder or "none",
        reranker=models.reranker or "none", session=models.session,
    )  # fmt: skip
    server_config.app = create_app(memory, settings)
    server = uvicorn.Server(server_config)
    server.run(sockets=None if listener is None else [listener])
