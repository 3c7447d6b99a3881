"""A model call (an embedder's, a reranker's) waited for at most a time limit, on threads of
its own.

An embedder is arbitrary code (a local model, a remote API) that nothing can interrupt: a call
runs on a worker thread the caller waits for at most its limit; a call that outlives it is
abandoned (it finishes on its own and its result is dropped). Requests (``convmem.engine.parts``)
and the background vector filler (``convmem.domain.vector_fill``) wait this way.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

T = TypeVar("T")

# --- the worker threads --------------------------------------------------------------

# Threads that run embedder calls for requests waiting with a limit. Daemon threads: a call that
# never returns (a hung remote model) must not keep the process from exiting, which the standard
# library's pool would (it joins its workers at exit).
_WORKERS = 4
_jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
_started: list[threading.Thread] = []
_start_lock = threading.Lock()


def _work() -> None:
    while True:
        future, call = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue  # its request stopped waiting before it began
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to the waiting request
            future.set_exception(exc)


def run_with_limit(call: Callable[[], T], seconds: float) -> T:
    """``call()`` on a worker thread, waited for at most ``seconds`` (``FutureTimeout`` after
    that: the call is cancelled if it has not begun, else left to finish unobserved)."""
    if len(_started) < _WORKERS:
        with _start_lock:
            while len(_started) < _WORKERS:
                thread = threading.Thread(target=_work, name="convmem-embedder", daemon=True)
                thread.start()
                _started.append(thread)
    future: Future[T] = Future()
    _jobs.put((future, call))
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        future.cancel()
        raise
