"""The budget: one bound on the memory and time an untrusted file makes agentform
spend, held by the operating system whatever the file does.

`metered()` runs a block (one workspace file's rendering, parsing and itemsFiles; one
test file; one agent script's rendering) under:
- memory: the process's address space may grow by at most BUDGET_MEMORY while the
  block runs (setrlimit RLIMIT_AS, soft limit only, restored after): an allocation
  past it fails at once with MemoryError where it was made, before a page is touched,
  so no swap storm and no other process starved;
- time: BUDGET_CPU_SECONDS of processor time (ITIMER_PROF) and BUDGET_WALL_SECONDS
  on the wall clock (ITIMER_REAL), each raising `BudgetExceeded` in the code running.

Both MemoryError and BudgetExceeded then leave the block as `BudgetExceeded`, whose
message names the limit; the reader turns it into one diagnostic at the file (and at
the template's line, where the exception passed through one). Timers only reach the
main thread and a computation in one C call only when it returns: code that may run
elsewhere, or must be stopped even there, runs in a worker (core/budget_worker.py)
whose parent kills it at the deadline. Where setrlimit or the timers are missing
(Windows; RLIMIT_AS on macOS) the early refusals of the sandbox are the bound.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType

from agentform.core import bounds
from agentform.core.errors import AgentformError

try:
    import resource
except ImportError:  # not on Windows
    resource = None  # type: ignore[assignment]

_REPEAT = 0.05  # seconds between reminders, should the code running swallow the first


@dataclass(frozen=True)
class Limits:
    """The budget's values (the defaults are core/bounds.py's)."""

    memory: int = bounds.BUDGET_MEMORY
    cpu_seconds: float = bounds.BUDGET_CPU_SECONDS
    wall_seconds: float = bounds.BUDGET_WALL_SECONDS


def current_limits() -> Limits:
    """The budget as bounds.py holds it now (a test may lower it)."""
    return Limits(bounds.BUDGET_MEMORY, bounds.BUDGET_CPU_SECONDS, bounds.BUDGET_WALL_SECONDS)


class BudgetExceeded(AgentformError):
    """A file made agentform compute more than the budget allows."""


def memory_message(limits: Limits) -> str:
    return f"needs more than the {limits.memory >> 20} MiB of memory a file may use (the budget)"


def time_message(limits: Limits, clock: str) -> str:
    seconds = limits.cpu_seconds if clock == "processor" else limits.wall_seconds
    return f"runs longer than the {seconds:g} s of {clock} time a file may use (the budget)"


_state = threading.local()


def _address_space() -> int | None:
    """The process's address space now, in bytes (None where /proc has no statm)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def _memory(limits: Limits) -> Iterator[None]:
    used = _address_space()
    if resource is None or used is None or sys.platform != "linux":
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    ceiling = used + limits.memory
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    if soft != resource.RLIM_INFINITY and soft <= ceiling:
        yield  # already bounded more tightly (an enclosing budget, the caller's ulimit)
        return
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class _Timers:
    """The two interval timers, armed for one block; the handlers they replace come back."""

    CLOCKS = (("processor", "ITIMER_PROF", "SIGPROF"), ("wall-clock", "ITIMER_REAL", "SIGALRM"))

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.active = False
        self.saved: list[tuple[int, int, object, tuple[float, float]]] = []

    def usable(self) -> bool:
        return (
            threading.current_thread() is threading.main_thread()
            and hasattr(signal, "setitimer")
            and all(hasattr(signal, timer) for _, timer, _ in self.CLOCKS)
        )

    def arm(self) -> None:
        self.active = True
        for clock, timer_name, signal_name in self.CLOCKS:
            timer, number = getattr(signal, timer_name), getattr(signal, signal_name)
            seconds = self.limits.cpu_seconds if clock == "processor" else self.limits.wall_seconds
            previous = signal.signal(number, self._handler(clock))
            self.saved.append((timer, number, previous, signal.setitimer(timer, seconds, _REPEAT)))

    def disarm(self) -> None:
        self.active = False
        for timer, number, previous, (delay, interval) in reversed(self.saved):
            signal.setitimer(timer, delay, interval)
            signal.signal(number, previous)  # type: ignore[arg-type]
        self.saved.clear()

    def _handler(self, clock: str) -> Callable[[int, FrameType | None], None]:
        def exceeded(signum: int, frame: FrameType | None) -> None:
            if self.active:
                raise BudgetExceeded(time_message(self.limits, clock))

        return exceeded


@contextlib.contextmanager
def metered(limits: Limits | None = None) -> Iterator[None]:
    """Runs the block under the budget (see the module's docstring); BudgetExceeded
    when it is exceeded. Within a metered block, another one adds no limit of its own."""
    if getattr(_state, "depth", 0):
        _state.depth += 1
        try:
            yield
        finally:
            _state.depth -= 1
        return
    limits = limits or current_limits()
    timers = _Timers(limits)
    _state.depth = 1
    try:
        with _memory(limits):
            if timers.usable():
                timers.arm()
            try:
                yield
            finally:
                if timers.saved:
                    timers.disarm()
    except MemoryError:
        raise BudgetExceeded(memory_message(limits)) from None
    finally:
        _state.depth = 0


def budget_message(exc: BaseException, limits: Limits | None = None) -> str | None:
    """What the budget says of `exc` when it is the budget's (memory or time), else None."""
    if isinstance(exc, MemoryError):
        return memory_message(limits or current_limits())
    if isinstance(exc, BudgetExceeded):
        return str(exc)
    return None
