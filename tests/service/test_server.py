"""`agentform service run` as a real process on loopback: start, restart, rate limit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

KEY = {"X-Api-Key": "demo-admin-key"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    cmd = [sys.executable, "-m", "agentform", "service", "run", "--port", str(port), *args]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    base = f"http://127.0.0.1:{port}/agents/v2"
    try:
        # Start-up is CPU work (imports, migrations, seed) that a loaded machine may
        # stretch many times over: the limit only stops a server that never comes up.
        deadline = time.monotonic() + 180
        while True:
            try:
                httpx.get(f"{base}/context", headers=KEY, timeout=10)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(60)


def test_serves_prints_base_url_and_keeps_data_across_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "svc.db")
    with running("--db", db) as (base, proc):
        created = httpx.post(f"{base}/agent-profile-pools", json={"name": "kept"}, headers=KEY)
        assert created.status_code == 201
    out = proc.stdout.read() if proc.stdout else ""
    assert base in out and "demo-admin-key" in out
    with running("--db", db) as (base, _):
        pools = httpx.get(f"{base}/agent-profile-pools", headers=KEY).json()
        assert [p["name"] for p in pools["items"]] == ["kept"]
        assert pools["items"][0]["id"] == created.json()["id"]


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    with running("--db", str(tmp_path / "svc.db"), "--rate-limit", "5") as (base, _):
        with httpx.Client(headers=KEY) as client:
            statuses = [client.get(f"{base}/context") for _ in range(30)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited, [r.status_code for r in statuses]
        assert int(limited[0].headers["Retry-After"]) >= 1
        assert limited[0].json() == {"code": 429, "message": "rate limit exceeded"}
        time.sleep(1.2)
        assert httpx.get(f"{base}/context", headers=KEY).status_code == 200


def test_invalid_seed_fails_before_listening(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text("organizations: [{name: a, agents: [{name: x, versions: []}]}]\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentform",
            "service",
            "run",
            "--port",
            str(free_port()),
            "--db",
            str(tmp_path / "svc.db"),
            "--seed",
            str(seed),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode != 0
    assert "versions" in proc.stderr and str(seed) in proc.stderr
    assert "Agent Service on" not in proc.stdout
