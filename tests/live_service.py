"""Helpers for tests that start ``convmem serve`` as a process of its own."""

from __future__ import annotations

import socket
import time

import httpx


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_healthy(base: str, seconds: float = 60) -> None:
    """Return once ``base``/healthz answers 200 (the service is up), or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
