"""`agentform service run` as a real process on loopback: start, restart, rate limit."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from tests.webhooks.receiver import HANG, Receiver, running_receiver

pytestmark = pytest.mark.server  # `agentform service run` as a real process

KEY = {"X-Api-Key": "demo-admin-key"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(*args: str, ignore_sigint: bool = False) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`service run --port 0 ARGS` with its output piped; yields the base URL it prints
    (its socket listens before it prints). `ignore_sigint`: started as `cmd &` from a
    script is (SIGINT ignored on entry)."""
    import signal

    cmd = [sys.executable, "-m", "agentform", "service", "run", "--port", "0", *args]

    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=ignore if ignore_sigint else None,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert banner.startswith("Agent Service on http://127.0.0.1:"), banner
        proc.banner = banner  # type: ignore[attr-defined]
        yield banner.split()[3], proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(60)
        if proc.stdout is not None:  # the rest of its output kept, the pipe closed
            proc.rest = proc.stdout.read()  # type: ignore[attr-defined]
            proc.stdout.close()


@pytest.mark.slow
def test_serves_prints_base_url_and_keeps_data_across_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "svc.db")
    with running("--db", db) as (base, proc):
        created = httpx.post(f"{base}/agent-profile-pools", json={"name": "kept"}, headers=KEY)
        assert created.status_code == 201
    out = proc.banner + proc.rest  # type: ignore[attr-defined]
    assert base in out and "demo-admin-key" in out
    with running("--db", db) as (base, _):
        pools = httpx.get(f"{base}/agent-profile-pools", headers=KEY).json()
        assert [p["name"] for p in pools["items"]] == ["kept"]
        assert pools["items"][0]["id"] == created.json()["id"]


@pytest.mark.slow
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


def test_port_zero_prints_the_port_it_bound(tmp_path: Path) -> None:
    with running("--db", str(tmp_path / "svc.db")) as (base, _):
        port = int(base.split(":")[2].split("/")[0])
        assert port != 0
        assert httpx.get(f"{base}/context", headers=KEY).status_code == 200


def test_a_busy_port_fails_before_the_database_or_the_banner(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "agentform", "service", "run", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=tmp_path,
        )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == (
        f"Error: 127.0.0.1:{port} is in use (another service running?); choose another --port\n"
    )
    assert list(tmp_path.iterdir()) == []  # no .agentform/service.db


def _stop_with_sigint_while_busy(
    tmp_path: Path, rx: Receiver, ignore_sigint: bool
) -> tuple[int, str, float]:
    """A delivery in flight to `rx`, which does not answer it, and a `/test` call held
    open waiting for it; then SIGINT. Returns (exit code, output, seconds to exit)."""
    import signal
    import threading

    with running("--db", str(tmp_path / "svc.db"), ignore_sigint=ignore_sigint) as (base, proc):
        rx.answer(HANG)
        hook = httpx.post(
            f"{base}/webhook-integrations", json={"name": "h", "url": rx.url}, headers=KEY
        ).json()

        def hold() -> None:  # the server holds /test until the attempt ends (up to 12 s)
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(
                    f"{base}/webhook-integrations/{hook['id']}/test", headers=KEY, timeout=30
                )

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        assert rx.wait_for(1), "the delivery was not attempted"
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=10)  # a real wait for the process to exit, bounded
        except subprocess.TimeoutExpired:
            code = -1
        took = time.monotonic() - began
        output = proc.stdout.read() if proc.stdout else ""
    rx.release.set()  # later requests get the default answer, 204
    return code, output, took


@pytest.mark.slow
def test_sigint_stops_promptly_and_cleanly_with_work_in_flight(tmp_path: Path) -> None:
    with running_receiver() as rx:
        code, output, took = _stop_with_sigint_while_busy(tmp_path, rx, ignore_sigint=False)
        assert code in (0, 130), output
        assert took < 4, f"took {took:.1f} s to stop"
        assert "Traceback" not in output and "Aborted" not in output, output
        # The abandoned attempt stayed pending: the next start makes it again, at once.
        with running("--db", str(tmp_path / "svc.db")):
            received = rx.wait_for(2, timeout=20)
    assert [r.event for r in received] == ["EXECUTION_TEST", "EXECUTION_TEST"]
    assert received[0].json()["info"] == received[1].json()["info"]


@pytest.mark.slow
def test_sigint_stops_a_service_started_in_the_background(tmp_path: Path) -> None:
    with running_receiver() as rx:
        code, output, took = _stop_with_sigint_while_busy(tmp_path, rx, ignore_sigint=True)
    assert code in (0, 130), output
    assert took < 4, f"took {took:.1f} s to stop"
    assert "Traceback" not in output, output


def test_a_port_out_of_range_is_refused_before_anything(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["service", "run", "--port", "70000", "--db", str(tmp_path / "svc.db")]
    )
    assert result.exit_code == 1  # a usage error, as every command's (cli/main.py)
    assert "'--port': 70000 is not in the range 0<=x<=65535" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_rate_limit_takes_the_clients_forms(tmp_path: Path) -> None:
    """`--rate-limit 3/s` (or N/min), as the provisioner's option takes it: one rule."""
    with running("--db", str(tmp_path / "svc.db"), "--rate-limit", "300/min") as (base, proc):
        assert proc.stdout is not None
        banner = [proc.stdout.readline() for _ in range(2)]
        assert "rate limit: 5 requests/s per API key\n" in banner, banner
        with httpx.Client(headers=KEY) as client:
            statuses = [client.get(f"{base}/context").status_code for _ in range(30)]
        assert 429 in statuses, statuses


def test_a_bad_rate_limit_is_refused_before_anything(tmp_path: Path) -> None:
    for bad in ("0", "fast", "3/h"):
        result = CliRunner().invoke(
            cli, ["service", "run", "--rate-limit", bad, "--db", str(tmp_path / "svc.db")]
        )
        assert result.exit_code == 1, result.output
        assert f"rate limit {bad!r}: expected requests per second" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_manual_clock_moves_only_when_service_advance_says(tmp_path: Path) -> None:
    with running("--db", str(tmp_path / "svc.db"), "--clock", "manual") as (base, proc):
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        assert lines[1] == (
            "clock: manual, standing at the time it started; move it with "
            f"`agentform service advance 2m --endpoint {base}` (an admin API key)\n"
        )
        agents = httpx.get(f"{base}/agents", headers=KEY).json()["items"]
        support = next(a["id"] for a in agents if a["name"] == "support-agent")
        execution = httpx.post(f"{base}/agents/{support}/execute", json={}, headers=KEY).json()
        executions = f"{base}/executions/{execution['executionId']}"
        assert httpx.get(executions, headers=KEY).json()["status"] in ("starting", "running")
        moved = CliRunner().invoke(
            cli,
            ["service", "advance", "until", f"executions/{execution['executionId']} is finished"],
            env={"AGENTFORM_API_KEY": "demo-admin-key", "AGENTFORM_ENDPOINT": base},
        )
        assert moved.exit_code == 0, moved.output
        assert moved.output.startswith("Clock moved ")
        assert httpx.get(executions, headers=KEY).json()["status"] == "completed"
