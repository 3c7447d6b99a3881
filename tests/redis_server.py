"""A real Redis for the session tier's tests: Debian's ``redis-server`` on 127.0.0.1, a free port,
a temp folder, no persistence unless a test asks for it. Started per test (it takes a few ms), so
a test may kill, restart, pause or flush it.

Without the binary or the ``redis`` client the tests skip, unless ``CONVMEM_REQUIRE_REDIS=1``
(CI), which makes a failure to start fail the run."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests import extras


def unavailable(reason: str) -> None:
    if extras.required("redis"):
        pytest.fail(f"Redis is required (CONVMEM_REQUIRE_REDIS=1): {reason}")
    pytest.skip(f"no Redis: {reason}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """One redis-server process; ``kill`` and ``start`` again keep its port (and, with
    ``persist``, its data)."""

    def __init__(self, *, persist: bool = False) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            unavailable("redis-server is not installed (apt-get install redis-server)")
        extras.module_of_extra("redis", "redis")
        self.binary = binary
        self.folder = Path(tempfile.mkdtemp(prefix="convmem-redis-"))
        self.port = _free_port()
        self.persist = persist
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        save = ["--save", "", "--appendonly", "no"]
        if self.persist:
            save = ["--save", "3600 1", "--dbfilename", "dump.rdb"]
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.folder), "--protected-mode", "yes", *save],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                unavailable(f"redis-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        unavailable("redis-server did not answer within 10 s")

    def client(self) -> object:
        import redis

        return redis.Redis.from_url(self.url)

    def kill(self) -> None:
        """SIGKILL: gone at once, nothing saved."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def save(self) -> None:
        import redis

        redis.Redis.from_url(self.url).save()

    def pause(self) -> None:
        """SIGSTOP: the port stays open but nothing answers (a slow Redis)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.resume()
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
