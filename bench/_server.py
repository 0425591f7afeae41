"""Runs the embedded service in a subprocess on a loopback port, for benchmarks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

KEY = "demo-admin-key"


@contextmanager
def service(db: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentform", "service", "run", "--port", str(port), "--db", str(db)],
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/agents/v2"
    try:
        for _ in range(200):
            try:
                httpx.get(f"{base}/context", headers={"X-Api-Key": KEY}, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        proc.wait(10)
