"""The workspace lock (issue 10, defect 3): two applies on one machine do not run
at once; the second waits up to --lock-timeout, then says who holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentform.cli import lock
from agentform.cli.main import cli
from agentform.cli.options import Seconds


@pytest.fixture
def ws(quickstart: Path) -> Path:
    return quickstart


def agentform(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_an_apply_while_another_holds_the_lock_stops_before_any_call(ws: Path) -> None:
    with lock.workspace_lock(ws, timeout=0, what="apply"):
        result = agentform("apply", "--auto-approve", "-C", str(ws))
    assert result.exit_code == 1
    assert "the workspace is locked by another agentform run" in result.output
    assert "apply" in result.output and "pid" in result.output
    assert "--lock-timeout" in result.output
    assert agentform("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 2  # no write


def test_an_apply_waits_for_the_lock_up_to_its_timeout(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = lock.workspace_lock(ws, timeout=0, what="apply")
    holder.__enter__()
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the other run finishes while this one waits
        waits.append(seconds)
        holder.__exit__(None, None, None)

    monkeypatch.setattr(lock, "sleep", sleep)
    result = agentform("apply", "--auto-approve", "--lock-timeout", "30s", "-C", str(ws))
    assert result.exit_code == 0, result.output
    assert waits and "Waiting for the workspace lock" in result.output
    assert agentform("plan", "--detailed-exitcode", "-C", str(ws)).exit_code == 0


def test_the_lock_is_released_after_each_run(ws: Path) -> None:
    assert agentform("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    assert agentform("apply", "--auto-approve", "-C", str(ws)).exit_code == 0
    with lock.workspace_lock(ws, timeout=0, what="test"):
        pass


@pytest.mark.parametrize(
    ("text", "seconds"), [("0", 0), ("0s", 0), ("45s", 45), ("2m", 120), ("1h30m", 5400)]
)
def test_lock_timeouts_read_as_terraform_writes_them(text: str, seconds: float) -> None:
    assert Seconds(zero=True).convert(text, None, None) == seconds


def test_a_bad_lock_timeout_is_refused(ws: Path) -> None:
    result = agentform("apply", "--lock-timeout", "soon", "-C", str(ws))
    assert result.exit_code != 0 and "--lock-timeout" in result.output


@pytest.mark.parametrize("text", ["-1s", "soon", "inf", "nan"])
def test_a_lock_timeout_below_0_or_not_a_duration_says_what_is_accepted(
    ws: Path, text: str
) -> None:
    result = agentform("apply", "--lock-timeout", text, "-C", str(ws))
    assert result.exit_code == 1, result.output  # a usage error (docs/guide/command-line.md)
    assert "--lock-timeout" in result.output and "nor seconds 0 or more" in result.output


def test_a_wait_that_runs_out_says_how_long_it_waited(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It advised `--lock-timeout` to one who had given it."""
    now = [1000.0]

    def sleep(seconds: float) -> None:  # the holder never lets go: time passes, faked
        now[0] += seconds

    monkeypatch.setattr(lock, "sleep", sleep)
    monkeypatch.setattr(lock, "monotonic", lambda: now[0])
    with lock.workspace_lock(ws, timeout=0, what="apply"):
        result = agentform("apply", "--auto-approve", "--lock-timeout", "2s", "-C", str(ws))
    assert result.exit_code == 1
    assert "waited 2s for it; nothing was changed" in result.output
    assert "e.g. --lock-timeout" not in result.output
