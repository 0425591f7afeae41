"""Runs the embedded service in a subprocess on a loopback port, for benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

KEY = "demo-admin-key"


@dataclass(frozen=True)
class Running:
    base: str
    pid: int

    def cpu(self) -> float:
        """CPU seconds the service process has used (user + system)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _serving(command: list[str]) -> Iterator[Running]:
    """`command` + [port] started on a free loopback port, until it answers /context."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*command, str(port)], stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/agents/v2"
    try:
        for _ in range(400):
            try:
                httpx.get(f"{base}/context", headers={"X-Api-Key": KEY}, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield Running(base, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)


@contextmanager
def running_service(db: Path, *args: str) -> Iterator[Running]:
    """`agentform service run` on a free loopback port, with extra `args`."""
    run = [sys.executable, "-m", "agentform", "service", "run", "--db", str(db), *args]
    with _serving([*run, "--port"]) as svc:
        yield svc


@contextmanager
def stub_service() -> Iterator[Running]:
    """`_stub_service.py` (canned answers, next to no cost) on a free loopback port."""
    with _serving([sys.executable, str(Path(__file__).parent / "_stub_service.py")]) as svc:
        yield svc


@contextmanager
def service(db: Path) -> Iterator[str]:
    with running_service(db) as svc:
        yield svc.base
