"""`agentform service run` serves the console, says where, and `--no-console` leaves
it out; a real process on loopback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.service.test_server import running

pytestmark = pytest.mark.server  # `agentform service run` as a real process


@pytest.mark.slow
def test_service_run_prints_the_console_and_serves_it(tmp_path: Path) -> None:
    with running("--db", str(tmp_path / "svc.db")) as (base, proc):
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and not line.startswith("console:"):
            line = proc.stdout.readline()
        assert line.startswith("console: http://127.0.0.1:") and "sign in" in line
        console = line.split()[1]
        assert console == base.replace("/agents/v2", "/console/")
        answer = httpx.get(console + "sign-in")
        assert answer.status_code == 200 and "API key" in answer.text
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]


@pytest.mark.slow
def test_no_console_serves_none(tmp_path: Path) -> None:
    with running("--db", str(tmp_path / "svc.db"), "--no-console") as (base, proc):
        assert proc.stdout is not None
        assert "console" not in proc.stdout.readline()  # the demo key's line, the last
        answer = httpx.get(base.replace("/agents/v2", "/console/sign-in"))
        assert answer.status_code == 404
