"""SQLite storage for the embedded Agent Service: the file, its connections, transactions.

One database file in WAL mode, one connection per thread (FastAPI runs sync
endpoints in a thread pool, the runtime runs job transactions in another).
Invariants such as "names are unique per organization" live in the schema, so
two concurrent creates of one name give one row and one IntegrityError, never
two rows. The schema is brought up to date on open (`store.migrations`).
Every timestamp the service writes comes from the database's clock
(`Conn.now`), so a manual clock in tests governs them too.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
import uuid
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from agentform.service.clock import wall_now
from agentform.service.errors import StorageFull
from agentform.service.start_errors import MigrationError
from agentform.service.store.migrations import upgrade

DEFAULT_DB_PATH = Path(".agentform") / "service.db"
"""Where a workspace keeps the embedded service's database, under its root: what
`service run --db` defaults to and what `endpoint: local` opens."""

T = TypeVar("T")
log = logging.getLogger("agentform.service")


class OrderCache:
    """The ordered rowids of recent list queries, each valid for one generation.

    With it a page is a slice and `total` a length, so reading row 9,901 costs
    what reading row 1 does; only the first read after a write walks the index.
    """

    def __init__(self, max_entries: int = 256) -> None:
        self._entries: OrderedDict[Hashable, tuple[int, array[int]]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, key: Hashable, generation: int) -> array[int] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != generation:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Hashable, generation: int, rowids: array[int]) -> None:
        with self._lock:
            self._entries[key] = (generation, rowids)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)


@functools.lru_cache(maxsize=256)
def iso(moment: datetime) -> str:
    """UTC with microseconds and a Z: sorts lexically in time order.

    Cached by the instant itself (equal instants, whatever their zone, are one text):
    while a manual clock stands still, or a transaction writes one moment many times,
    it is formatted once; a moved clock is another key."""
    if moment.tzinfo is None:  # astimezone would take it for local time, silently
        raise ValueError(f"a naive datetime cannot be stored: {moment!r}")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def new_id() -> str:
    return str(uuid.uuid4())


class Conn(sqlite3.Connection):
    """A connection of the service's database: knows its Database, its clock, and
    what to do once the current transaction commits."""

    database: Database
    _after_commit: list[Callable[[], None]]

    def now(self) -> datetime:
        return self.database.now()

    def now_iso(self) -> str:
        return iso(self.database.now())

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Runs `callback` once the current write transaction has committed (not on rollback)."""
        self._after_commit.append(callback)


def create_private(path: Path) -> None:
    """Creates the database file readable by its owner alone (0600, whatever the
    umask): it holds webhook header values, which the service must keep to send.
    SQLite gives its -wal and -shm files the database file's mode. An existing
    file keeps the mode it has (its owner's choice)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)  # the umask may have taken bits away, never added them
    finally:
        os.close(fd)


class Database:
    """A SQLite file shared by every thread of the service, one connection each."""

    def __init__(self, path: str | Path, now: Callable[[], datetime] = wall_now) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        create_private(self.path)
        self.now = now
        self._local = threading.local()
        self._all: list[Conn] = []
        self._all_lock = threading.Lock()
        self._users = 0  # threads inside a read or a write
        self._left = threading.Condition(self._all_lock)
        self.closing = False
        self._generation = 0
        self._generation_lock = threading.Lock()
        self.order_cache = OrderCache()
        self._caches: dict[str, Any] = {}
        self._listeners: dict[str, list[Callable[..., None]]] = {}
        try:
            self.applied_steps = upgrade(self._connection(), now=now)
        except sqlite3.DatabaseError as exc:  # not a SQLite file, or a damaged one
            self.close()
            raise self.unreadable(exc) from None
        except MigrationError as exc:
            self.close()
            raise MigrationError(f"{self.path}: {exc}") from None

    def unreadable(self, exc: sqlite3.DatabaseError) -> MigrationError:
        """The one line start-up says of a file SQLite cannot read: where, what SQLite
        said, what to do."""
        return MigrationError(
            f"{self.path}: cannot open the database (SQLite says: {exc}); restore it from "
            "a backup, or move it aside to start with an empty one"
        )

    @contextmanager
    def _using(self) -> Iterator[Conn]:
        """This thread's connection, counted in use until the block ends (see close)."""
        with self._all_lock:
            if self.closing:
                raise sqlite3.ProgrammingError(f"{self.path}: the database is closed")
            self._users += 1
        try:
            yield self._connection()
        finally:
            with self._all_lock:
                self._users -= 1
                self._left.notify_all()

    def _connection(self) -> Conn:
        conn: Conn | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30, factory=Conn
            )
            conn.database = self
            conn._after_commit = []
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    def cache(self, name: str, factory: Callable[[], T]) -> T:
        """A per-database object of a store module (made once, on first use)."""
        with self._all_lock:
            if name not in self._caches:
                self._caches[name] = factory()
            return cast(T, self._caches[name])

    def listen(self, topic: str, callback: Callable[..., None]) -> None:
        """`callback` runs (on the committing thread) after each commit that notified
        `topic`, with what the notification carried."""
        self._listeners.setdefault(topic, []).append(callback)

    def unlisten(self, topic: str, callback: Callable[..., None]) -> None:
        self._listeners.get(topic, []).remove(callback)

    def notify_after_commit(self, conn: Conn, topic: str, *args: Any) -> None:
        """Tells `topic`'s listeners once this transaction commits; `args` go with it."""
        for callback in list(self._listeners.get(topic, ())):
            conn.after_commit(functools.partial(callback, *args) if args else callback)

    # A seqlock over commits: odd while a write transaction may commit, even otherwise.
    # A read notes the generation, then pins its snapshot; while the generation is
    # unchanged and even, that snapshot is exactly the state of that generation, so
    # anything cached under the generation (see OrderCache) is valid for it.
    def _bump(self) -> None:
        with self._generation_lock:
            self._generation += 1

    def snapshot_generation(self) -> int | None:
        """The generation the current read snapshot shows, when that is known exactly."""
        start: int | None = getattr(self._local, "snapshot", None)
        if start is None or start % 2 or start != self._generation:
            return None
        return start

    @contextmanager
    def read(self) -> Iterator[Conn]:
        """A consistent snapshot for a multi-statement read (count + page)."""
        with self._using() as conn, self._snapshot(conn) as pinned:
            yield pinned

    @contextmanager
    def _snapshot(self, conn: Conn) -> Iterator[Conn]:
        start = self._generation
        conn.execute("BEGIN")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # pins the snapshot now
        self._local.snapshot = start
        try:
            yield conn
        finally:
            self._local.snapshot = None
            conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[Conn]:
        """A write transaction; takes the write lock up front to avoid upgrade deadlocks.
        A full disk (SQLITE_FULL, in a statement or at commit) rolls it back whole and
        raises StorageFull (507)."""
        with self._using() as conn, self._transaction(conn) as written:
            yield written

    @contextmanager
    def _transaction(self, conn: Conn) -> Iterator[Conn]:
        conn.execute("BEGIN IMMEDIATE")
        conn._after_commit = []
        self._bump()
        try:
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:  # SQLite may have rolled back already
                    conn.execute("ROLLBACK")
                conn._after_commit = []
                if isinstance(exc, sqlite3.Error) and exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
                    log.error("%s: %s; the write was rolled back", self.path, exc)
                    raise StorageFull() from None
                raise
        finally:
            self._bump()
        callbacks, conn._after_commit = conn._after_commit, []
        for callback in callbacks:
            callback()

    def close(self) -> None:
        """Closes every thread's connection once no thread is inside a read or a write
        (closing one under a statement frees what SQLite is using: a crash); a read or
        a write begun after is refused."""
        with self._all_lock:
            self.closing = True
            self._left.wait_for(lambda: self._users == 0)
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
