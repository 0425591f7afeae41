"""Ctrl-C and SIGTERM during an apply, as Terraform does: the first starts no new
change and lets those under way finish (for at most GRACE seconds), then the usual
report is printed; a second cancels the changes under way at once. Before the
changes start (reading, planning, the prompt), SIGTERM is Ctrl-C too: CI cancels a
job with SIGINT then SIGTERM, and the default SIGTERM ends the process unsaid."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from agentform.engine.apply import ApplyStop

GRACE = 30.0  # seconds the changes under way get to finish after the first signal
SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def terminated_as_interrupted() -> Iterator[None]:
    """While the block runs, SIGTERM raises KeyboardInterrupt, as SIGINT does."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals are not ours to take
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Timer(Protocol):
    def cancel(self) -> None: ...


@contextmanager
def stopping_on_signals(
    stop: ApplyStop,
    say: Callable[[str], None],
    grace: float = GRACE,
    later: Callable[[float, Callable[[], Any]], Timer] | None = None,
) -> Iterator[None]:
    """While the block runs (in the event loop), SIGINT and SIGTERM call `stop`.
    `later(seconds, callback)` runs the end of the grace period (tests: a fake)."""
    loop = asyncio.get_running_loop()
    later = later or loop.call_later
    signals = 0
    timers: list[Timer] = []

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            stop.soon()
            say(
                f"\nInterrupted: no new change starts; those under way get {grace:g} s to "
                "finish (interrupt again to cancel them)."
            )
            timers.append(later(grace, stop.now))
        else:
            stop.now()
            say("\nInterrupted again: cancelling the changes under way.")

    previous = {}
    for signum in SIGNALS:
        try:
            previous[signum] = signal.getsignal(signum)
            loop.add_signal_handler(signum, on_signal)
        except (ValueError, RuntimeError, NotImplementedError):
            previous.pop(signum, None)  # not the main thread, or no signals here
    try:
        yield
    finally:
        for timer in timers:
            timer.cancel()
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)
