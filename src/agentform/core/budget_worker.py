"""A warm worker process computing what untrusted input asks, under the budget.

Code that runs outside the main thread (the service's runner rendering an agent's
script) cannot be stopped by a timer, and a computation in one C call is not
stopped by one either: it runs here instead. `Worker.call("module:function", …)`
sends the call to a child process (started once, its modules imported once),
which runs it under `metered()` (core/budget.py); the parent waits at most the
budget's wall-clock seconds (and a second's grace) and kills the child past them,
then starts another for the next call. The child's environment holds no variable
of the parent's (no credential is there to read), and its result comes back
pickled: it must be plain data and models.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import selectors
import struct
import subprocess
import sys
import threading
from typing import IO, Any

from agentform.core.budget import BudgetExceeded, Limits, current_limits, metered, time_message

_HEADER = struct.Struct("!Q")
_GRACE = 1.0  # seconds past the budget before the parent stops waiting


def _write(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


def _read(stream: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(_read_exactly(stream, _HEADER.size))
    return pickle.loads(_read_exactly(stream, size))


def _function(name: str) -> Any:
    module, _, qualname = name.partition(":")
    return getattr(importlib.import_module(module), qualname)


def serve() -> None:
    """The child's loop: a call in, its answer out, until the parent closes the pipe."""
    calls, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers goes to the parent's pipe
    for module in sys.argv[1:]:
        importlib.import_module(module)
    while True:
        try:
            name, args, limits = _read(calls)
        except EOFError:
            return
        try:
            with metered(limits):
                answer: tuple[str, Any] = ("ok", _function(name)(*args))
        except BudgetExceeded as exc:
            answer = ("budget", str(exc))
        except Exception as exc:  # the function's own error, raised again in the parent
            answer = ("raised", exc)
        try:
            _write(answers, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _write(answers, ("raised", TypeError(f"an answer that cannot be sent: {exc}")))


def _readable(pipe: IO[bytes], seconds: float) -> bool:
    """Whether `pipe` has something to read within `seconds`. Not select(): it cannot
    wait on a descriptor past 1,023, and a service holds one per connection."""
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        return bool(selector.select(seconds))


class Worker:
    """One child at a time, computing one call at a time (see the module's docstring)."""

    def __init__(self, *preload: str) -> None:
        self.preload = preload  # modules the child imports when it starts
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.owner = os.getpid()  # a forked copy of this process owns no child of ours
        atexit.register(self.stop)

    def call(self, function: str, *args: Any, limits: Limits | None = None) -> Any:
        """`function(*args)` computed in the child; BudgetExceeded past the budget, the
        function's own exception when it raised one."""
        limits = limits or current_limits()
        with self.lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            try:
                _write(process.stdin, (function, args, limits))
                if not _readable(process.stdout, limits.wall_seconds + _GRACE):
                    raise TimeoutError
                kind, value = _read(process.stdout)
            except (TimeoutError, EOFError, OSError):
                self._kill()
                raise BudgetExceeded(time_message(limits, "wall-clock")) from None
        if kind == "ok":
            return value
        if kind == "budget":
            self._kill()  # what a MemoryError left behind is not worth keeping
            raise BudgetExceeded(value)
        raise value

    def start(self) -> None:
        """Starts the child now (it imports its modules while the caller goes on), so
        the first call does not wait for it."""
        with self.lock:
            self._started()

    def _started(self) -> subprocess.Popen[bytes]:
        if self.owner != os.getpid():  # forked: the parent's child is the parent's
            self.process, self.owner = None, os.getpid()
        if self.process is None or self.process.poll() is not None:
            code = "from agentform.core.budget_worker import serve; serve()"
            environment = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            if "SYSTEMROOT" in os.environ:  # Python on Windows needs it to start
                environment["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, *self.preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=environment,
            )
        return self.process

    def _kill(self) -> None:
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None

    def stop(self) -> None:
        """Ends the child (at exit; it holds nothing to keep, so it is not waited for),
        unless this is a forked copy of the process that started it."""
        with self.lock:
            if self.owner == os.getpid():
                self._kill()
