"""Output to a reader that went away (`agentform apply | head -3`) is dropped.

Once a write to stdout meets a closed pipe, the run goes on without it: the
command finishes its work (an apply makes every change), later output is dropped
quietly, and the exit code is the command's own. The file descriptor is pointed
at /dev/null too, so the interpreter's last flush at exit does not fail again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class QuietStdout:
    """sys.stdout that stops writing, without an error, once its reader is gone."""

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
    """Runs the block with sys.stdout wrapped in QuietStdout."""
    if isinstance(sys.stdout, QuietStdout):
        yield
        return
    original = sys.stdout
    sys.stdout = QuietStdout(original)
    try:
        yield
    finally:
        sys.stdout = original
