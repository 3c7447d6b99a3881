"""compose.yaml: each convmem process's health check probes a port that process opens (the
image's own check probes the service's port 8000, which the worker never opens)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

import convmem

COMPOSE = Path(__file__).resolve().parent.parent / "compose.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_worker_health_check_probes_the_port_the_worker_opens(tmp_path: Path) -> None:
    worker = yaml.safe_load(COMPOSE.read_text())["services"]["worker"]
    command = worker["command"]
    assert command[0] == "worker"
    port = command[command.index("--metrics-port") + 1]
    check = worker["healthcheck"]["test"]
    assert check[0] == "CMD" and f":{port}/" in check[-1]
    # the same command and check, on a free port here (9100 may be taken on this machine)
    free = str(_free_port())
    convmem.open(tmp_path / "w.db").close()  # compose's database exists (PostgreSQL's service)
    args = [free if arg == port else arg for arg in command[1:]]
    process = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli.main", "worker", "--db", str(tmp_path / "w.db"), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        probe = [sys.executable, *check[2:-1], re.sub(f":{port}/", f":{free}/", check[-1])]
        deadline = time.monotonic() + 60
        while True:
            if subprocess.run(probe, capture_output=True, timeout=30).returncode == 0:
                break
            assert process.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker's health check never passed"
            time.sleep(0.5)
    finally:
        process.terminate()
        process.wait(timeout=30)
