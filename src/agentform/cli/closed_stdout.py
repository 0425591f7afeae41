"""Output to a reader that went away (`agentform apply | head -3`, or stderr's in
`agentform validate 2>&1 >/dev/null | head -0`) is dropped.

Once a write to stdout or stderr meets a closed pipe, the run goes on without that
stream: the command finishes its work (an apply makes every change), later output
to it is dropped quietly, and the exit code is the command's own (a warning that
could not be shown does not fail a run). The file descriptor is pointed at
/dev/null too, so the interpreter's last flush at exit does not fail again. A
stream closed before the run began (`2>&-`) is None in Python and is left so:
click writes nothing to it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class QuietStream:
    """sys.stdout or sys.stderr that stops writing, without an error, once its reader
    is gone."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._drop_from_now_on()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._drop_from_now_on()

    def _drop_from_now_on(self) -> None:
        self.reader_gone = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass  # not a real file (a test's buffer): dropping our writes is enough

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def dropping_output_once_closed() -> Iterator[None]:
    """Runs the block with sys.stdout and sys.stderr wrapped in QuietStream."""
    originals = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (_quiet(s) for s in originals)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = originals


def _quiet(stream: TextIO | None) -> Any:
    """The stream wrapped (once); None (a stream closed from the start) as it is."""
    return stream if stream is None or isinstance(stream, QuietStream) else QuietStream(stream)
