"""One runner per database: the process whose runner does a database's due work
holds an advisory lock (flock) on a file beside it, `<database>.runner-lock`.

Two `agentform service run` on one database would each run every due job: an
execution's steps twice, a batch's items twice, a delivery sent twice. The
second is refused before it serves, naming the process that holds the lock. The
kernel releases a flock when its holder exits, kill -9 included, so a crashed
service never leaves a stale lock behind (a pid file would); a clean stop, or a
start that could not open the database, removes the file.

Within one process the lock is counted, not refused: an embedding caller (a test,
`agentform test`) may start a second app's runner on a database it already runs,
as it could before; the lock is about processes. Delivery workers
(delivery/workers.py) do not take it: they claim deliveries with leases of their own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from agentform.service.start_errors import CannotStart

SUFFIX = ".runner-lock"

_held: dict[Path, tuple[int, int]] = {}  # lock file -> (descriptor, holders in this process)
_guard = threading.Lock()


class DatabaseInUse(CannotStart):
    """Another process runs this database's due work."""


@contextlib.contextmanager
def held(db_path: Path) -> Iterator[None]:
    """The lock held for the block (`service run` takes it before saying a word)."""
    acquire(db_path)
    try:
        yield
    finally:
        release(db_path)


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + SUFFIX)


def acquire(db_path: Path) -> None:
    """Holds the database's runner lock for this process (once more if held already),
    or raises DatabaseInUse naming the process holding it."""
    path = lock_path(db_path).resolve()
    with _guard:
        if path in _held:
            fd, count = _held[path]
            _held[path] = (fd, count + 1)
            return
        _held[path] = (_locked(db_path, path), 1)


def _locked(db_path: Path, path: Path) -> int:
    """A descriptor of the lock file, locked. A holder removes the file before it lets
    go, so a lock won on a file no longer at `path` is on a removed one: try again."""
    while True:
        fd = _opened(db_path, path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise DatabaseInUse(
                f"{db_path}: another Agent Service (pid {holder}) is running this "
                "database's work; stop it first, or give this one another --db"
            ) from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
    return fd


def _opened(db_path: Path, path: Path) -> int:
    """The lock file's descriptor, its folder made as the database's would be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise CannotStart(
            f"{db_path}: cannot create the database there ({exc.strerror or exc})"
        ) from None


def release(db_path: Path) -> None:
    """Lets go of one hold; the last one removes the lock file, then unlocks: nothing
    is left beside the database (a start that failed to open it included). A process
    that opened the file just before sees, once it wins the lock, that it is gone."""
    path = lock_path(db_path).resolve()
    with _guard:
        if path not in _held:
            return
        fd, count = _held[path]
        if count > 1:
            _held[path] = (fd, count - 1)
            return
        del _held[path]
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)  # closing the last descriptor releases the flock
