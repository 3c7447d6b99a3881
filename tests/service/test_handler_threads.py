"""Handler threads per process: requests beyond ``handler_threads`` wait their turn, first come
first served, rather than all running at once and contending for the GIL and the writer lock."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.errors import InvalidInput
from convmem.service.app import ServiceSettings, create_app, default_handler_threads


def _most_at_once(memory: convmem.Memory, threads: int, requests: int) -> int:
    app = create_app(memory, ServiceSettings(handler_threads=threads))
    running = 0
    most = 0
    guard = threading.Lock()

    # a synchronous route of the test's own, run on the same thread pool as the service's routes
    @app.get("/test/occupy")
    def occupy() -> dict[str, int]:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.05)  # long enough for the other requests to arrive meanwhile
        with guard:
            running -= 1
        return {}

    with TestClient(app) as client, ThreadPoolExecutor(requests) as pool:
        statuses = list(pool.map(lambda _: client.get("/test/occupy").status_code, range(requests)))
    assert statuses == [200] * requests
    return most


@pytest.mark.parametrize("threads", [1, 3])
def test_no_more_handlers_run_at_once_than_the_setting(
    memory: convmem.Memory, threads: int
) -> None:
    assert 1 <= _most_at_once(memory, threads, requests=8) <= threads


def test_the_setting_is_at_least_one() -> None:
    with pytest.raises(InvalidInput):
        ServiceSettings(handler_threads=0)


def test_serve_gives_postgresql_more_threads_than_sqlite() -> None:
    on_sqlite = default_handler_threads("chat.db")
    assert on_sqlite == default_handler_threads(None) == default_handler_threads("sqlite:chat.db")
    assert 1 <= on_sqlite < default_handler_threads("postgresql://db.example/convmem")
