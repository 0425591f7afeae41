"""Ctrl-C and SIGTERM during an apply, as Terraform does: the first starts no new
change and lets those under way finish (for at most GRACE seconds), then the usual
report is printed; a second cancels the changes under way at once. Before the
changes start (planning, the prompt), both just abort: SIGTERM too, since CI
cancels a job with SIGINT then SIGTERM, and the default SIGTERM ends the process
unsaid."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from agentform.engine.apply import ApplyStop

GRACE = 30.0  # seconds the changes under way get to finish after the first signal
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class BeforeTheChanges:
    """SIGINT and SIGTERM from the lock taken until the changes start (planning, the
    prompt). A handler runs wherever the process is, inside a `__del__` or a GC
    callback too, where an exception it raises is dropped: so it only records the
    stop, and the apply checks it at its safe points (`check`: before the prompt and
    before the changes). To stop at once, it also has the event loop cancel the
    planning task (an `await` is a safe point: planning writes nothing), and raises at
    the prompt, whose blocking read nothing else wakes (lost, the record still holds)."""

    def __init__(self, stop: ApplyStop) -> None:
        self.stop = stop
        self._planning: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None
        self._at_prompt = False

    def _on_signal(self, signum: int, frame: Any) -> None:
        # a flag only: setting the stop's events here could wake a waiter mid-step
        self.stop.requested = True
        if self._at_prompt:
            raise KeyboardInterrupt
        if self._planning is not None:
            self._planning[0].call_soon_threadsafe(self._cancel_planning)

    def _cancel_planning(self) -> None:  # in the loop, between two of its steps
        if self._planning is not None:
            self._planning[1].cancel()

    def check(self) -> None:
        """At a safe point: a stop asked for ends the apply here, nothing started."""
        if self.stop.requested:
            raise asyncio.CancelledError

    @contextmanager
    def installed(self) -> Iterator[None]:
        previous = {}
        try:
            for signum in SIGNALS:
                previous[signum] = signal.signal(signum, self._on_signal)
        except ValueError:  # not the main thread: signals are not ours to take
            pass
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    @contextmanager
    def planning(self) -> Iterator[None]:
        """Inside the running task: a signal cancels it at its next `await`."""
        task = asyncio.current_task()
        assert task is not None
        self._planning = (asyncio.get_running_loop(), task)
        try:
            yield
        finally:
            self._planning = None

    @contextmanager
    def at_prompt(self) -> Iterator[None]:
        self.check()
        self._at_prompt = True
        try:
            yield
        finally:
            self._at_prompt = False


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
