"""Ctrl-C (or SIGTERM) during `agentform apply`, in a real process: the changes
under way finish, the report is printed, the exit code is 1, nothing is half-done,
and the next apply converges."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_apply_reports_and_leaves_nothing_half_done(
    quickstart: Path, signum: int
) -> None:
    proc = subprocess.Popen(
        # a slow rate, so that the signal comes while changes remain
        [sys.executable, "-m", "agentform", "apply", "--auto-approve", "--rate-limit", "5/s"],
        cwd=quickstart,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if ": done" in line:
            proc.send_signal(signum)
            break
    out, err = proc.communicate(timeout=120)
    out = "".join(lines) + out
    assert proc.returncode == 1, (out, err)
    assert "Apply interrupted:" in out and "not attempted" in out, out
    assert "Traceback" not in err and "Aborted!" not in err, err
    assert "no new change starts" in err
    runner = CliRunner()
    plan = runner.invoke(cli, ["plan", "-C", str(quickstart)], catch_exceptions=False)
    assert "to update" in plan.output and " 0 to update" in plan.output, plan.output  # no half-done
    again = runner.invoke(cli, ["apply", "--auto-approve", "-C", str(quickstart)])
    assert again.exit_code == 0, again.output  # the lock was released; it converges
