"""Closing the database while another thread is inside a read or a write: the close
waits for it to leave, so no connection is closed under a statement (SQLite frees
what the statement uses: a worker crashed with a segmentation fault when a test
closed its service while a list request's thread still read). After the close, a
new read or write is refused with a clear error."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from agentform.service.store.database import Database


def test_a_close_waits_for_a_read_in_progress(tmp_path: Path) -> None:
    db = Database(tmp_path / "d.db")
    inside, outcome = threading.Event(), []
    closer = threading.Thread(target=db.close)

    def reader() -> None:
        with db.read() as conn:
            inside.set()
            while closer.is_alive() and not db.closing:
                time.sleep(0.001)  # until the close has begun (or, unsafe, ended)
            outcome.append(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])

    thread = threading.Thread(target=reader)
    thread.start()
    inside.wait()
    closer.start()
    thread.join()
    closer.join()
    assert outcome and outcome[0] > 0  # the read finished on an open connection
    with pytest.raises(sqlite3.ProgrammingError, match="closed"), db.read():
        pass


def test_a_write_after_the_close_is_refused(tmp_path: Path) -> None:
    db = Database(tmp_path / "d.db")
    db.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"), db.write():
        pass
