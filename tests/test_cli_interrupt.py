"""Ctrl-C (or SIGTERM) during `agentform apply`, in a real process: the changes
under way finish, the report is printed, the exit code is 1, nothing is half-done,
and the next apply converges."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentform.cli.interrupts import GRACE, BeforeTheChanges, stopping_on_signals
from agentform.cli.main import cli
from agentform.engine.apply import ApplyStop
from agentform.engine.planner import make_plan


@pytest.mark.slow
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


class FakeTimers:
    """`later` for stopping_on_signals: records the grace period instead of waiting."""

    def __init__(self) -> None:
        self.set: list[tuple[float, Callable[[], Any]]] = []
        self.cancelled = 0

    def __call__(self, seconds: float, callback: Callable[[], Any]) -> FakeTimers:
        self.set.append((seconds, callback))
        return self

    def cancel(self) -> None:
        self.cancelled += 1


async def _delivered(signum: int, until: Callable[[], bool]) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(1000):  # the loop runs the handler on a turn of its own
        if until():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"signal {signum} was not handled")


def under_signals(
    steps: Callable[[ApplyStop, FakeTimers], Awaitable[None]],
) -> tuple[list[str], FakeTimers]:
    """Runs `steps` inside stopping_on_signals (its grace timer a fake); what it said."""
    said: list[str] = []
    timers = FakeTimers()

    async def go() -> None:
        stop = ApplyStop()
        with stopping_on_signals(stop, said.append, later=timers):
            await steps(stop, timers)

    asyncio.run(go())
    return said, timers


def test_the_grace_period_ends_by_cancelling_what_is_under_way() -> None:
    """The first signal starts no new change and sets a GRACE-second timer; when it
    fires, the changes under way are cancelled (as a second signal does)."""

    async def steps(stop: ApplyStop, timers: FakeTimers) -> None:
        await _delivered(signal.SIGINT, lambda: stop.requested)
        assert not stop.aborted.is_set()  # under way: still running
        assert [s for s, _ in timers.set] == [GRACE]
        timers.set[0][1]()  # the grace period passes
        assert stop.aborted.is_set()

    before = signal.getsignal(signal.SIGINT)
    said, timers = under_signals(steps)
    assert "30 s to finish" in said[0]
    assert timers.cancelled == 1  # the block ended: its timer is not left behind
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_signal_cancels_at_once_without_waiting_for_the_grace_period() -> None:
    async def steps(stop: ApplyStop, timers: FakeTimers) -> None:
        await _delivered(signal.SIGTERM, lambda: stop.requested)
        await _delivered(signal.SIGTERM, stop.aborted.is_set)

    said, timers = under_signals(steps)
    assert len(timers.set) == 1 and "Interrupted again" in said[1]


@pytest.mark.slow
def test_sigterm_before_the_changes_start_stops_as_ctrl_c_does(quickstart: Path) -> None:
    """CI cancels a job with SIGINT, then SIGTERM: a SIGTERM while the apply still
    plans (the lock taken, no change started) killed the process at once (exit -15,
    nothing said). It stops as Ctrl-C does: nothing started, exit 1."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentform", "apply", "--auto-approve", "--rate-limit", "1/s"],
        cwd=quickstart,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = quickstart / ".agentform" / "lock"
    deadline = time.monotonic() + 60
    while not (lock.is_file() and lock.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the apply holds the lock: its handlers are in place
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert "Traceback" not in err
    assert err.endswith("Interrupted before any change started; nothing was changed.\n"), err
    plan = CliRunner().invoke(cli, ["plan", "-C", str(quickstart)], catch_exceptions=False)
    assert " 0 to update" in plan.output and "to create" in plan.output, plan.output


class SignalledWhileFinalized:
    """Sends SIGTERM to this process from its finalizer, when a handler is in place:
    an exception the handler raises there is lost ("Exception ignored in ...")."""

    sent = False

    def __del__(self) -> None:
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN):
            SignalledWhileFinalized.sent = True
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before kill returns


def test_a_sigterm_handled_inside_a_finalizer_still_stops_the_apply(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SIGTERM handler raised KeyboardInterrupt wherever the process was; inside
    a __del__ (or a GC callback) Python drops it, and the apply went on and exited 0.
    The stop is recorded, and the apply sees it before the changes start."""

    async def planned_after_a_finalizer(*args: Any, **kwargs: Any) -> Any:
        SignalledWhileFinalized()  # dropped at once: its __del__ runs here
        return await make_plan(*args, **kwargs)

    monkeypatch.setattr("agentform.cli.apply_cmd.make_plan", planned_after_a_finalizer)
    result = CliRunner().invoke(cli, ["apply", "--auto-approve", "-C", str(quickstart)])
    assert SignalledWhileFinalized.sent
    assert result.exit_code == 1, result.output
    assert "Interrupted before any change started; nothing was changed." in result.output
    plan = CliRunner().invoke(cli, ["plan", "-C", str(quickstart)], catch_exceptions=False)
    assert " 0 to update" in plan.output and "10 to create" in plan.output, plan.output


def test_signals_while_planning_cancel_it_at_an_await_and_raise_nothing() -> None:
    """Before the changes, a second signal is as the first: planning just aborts."""
    before = BeforeTheChanges(ApplyStop())
    said_after: list[int] = []

    async def planning() -> None:
        with before.planning():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            said_after.append(2)  # the handlers raised nothing
            await asyncio.Event().wait()  # an answer that never comes

    with before.installed(), pytest.raises(asyncio.CancelledError):
        asyncio.run(planning())
    assert said_after == [2] and before.stop.requested


def test_a_signal_at_the_prompt_ends_it_and_if_lost_the_next_check_stops() -> None:
    before = BeforeTheChanges(ApplyStop())
    with before.installed():
        with pytest.raises(KeyboardInterrupt), before.at_prompt():
            os.kill(os.getpid(), signal.SIGINT)  # a blocking read wakes by nothing else
        with pytest.raises(asyncio.CancelledError), before.at_prompt():
            pass  # asked for already: the prompt is not shown
    lost = BeforeTheChanges(ApplyStop())
    # as a finalizer drops it:
    with lost.installed(), lost.at_prompt(), contextlib.suppress(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(asyncio.CancelledError):
        lost.check()  # before the changes
