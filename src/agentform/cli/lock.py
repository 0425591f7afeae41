"""The workspace lock: one apply at a time per workspace on this machine.

An advisory lock (`flock`) on `.agentform/lock`, as Terraform locks its state:
a second apply waits up to `--lock-timeout` (default 0: it stops at once), then
says who holds the lock. The kernel releases the lock when its process ends,
so a crashed run never leaves a stale lock behind. Applies on other machines
are not seen: for them, a change found already made is "already in place".
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from agentform.cli.options import Seconds
from agentform.core.errors import WorkspaceLocked

sleep = time.sleep  # replaced in tests, so waiting needs no real time
monotonic = time.monotonic  # replaced with it
POLL = 0.5


lock_timeout_option = click.option(
    "--lock-timeout",
    type=Seconds(zero=True),
    metavar="DURATION",
    default="0s",
    show_default=True,
    help="How long to wait for another run's workspace lock (e.g. 30s, 5m).",
)


@contextmanager
def workspace_lock(
    root: Path, timeout: float, what: str, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Holds `.agentform/lock` of the workspace at `root` for the block."""
    folder = root / ".agentform"
    folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, timeout, say)
        os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        os.pwrite(
            fd, f"pid {os.getpid()} on {socket.gethostname()}: {what} since {stamp}".encode(), 0
        )
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, timeout: float, say: Callable[[str], None] | None) -> None:
    deadline = monotonic() + timeout
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            holder = os.pread(fd, 1000, 0).decode(errors="replace").strip() or "a run"
            left = deadline - monotonic()
            if left <= 0:
                advice = (
                    f"waited {_said(timeout)} for it; nothing was changed. Wait for it to "
                    "finish, or wait longer with a larger --lock-timeout"
                    if timeout > 0
                    else "nothing was changed. Wait for it to finish, or wait for the lock "
                    "with --lock-timeout (e.g. --lock-timeout 5m)"
                )
                raise WorkspaceLocked(
                    f"the workspace is locked by another agentform run ({holder}); {advice}"
                ) from None
            if not told and say is not None:
                say(f"Waiting for the workspace lock, held by {holder} …")
                told = True
            sleep(min(POLL, left))


def _said(seconds: float) -> str:
    return f"{seconds:g}s"
