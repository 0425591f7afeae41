"""Several steps in one write transaction, each in its own savepoint (the runtime's
group commit, service/runtime/grouped.py): a step that raises undoes only itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agentform.service.store.database import Conn, Database


def run_steps(db: Database, steps: Sequence[Callable[[Conn], Any]]) -> list[tuple[bool, Any]]:
    """(True, result) or (False, the exception) of each step, in order, one commit."""
    outcomes: list[tuple[bool, Any]] = []
    with db.write() as conn:
        for step in steps:
            try:
                with undone_on_error(conn):
                    outcomes.append((True, step(conn)))
            except Exception as exc:
                if not conn.in_transaction:
                    raise  # the step ended the transaction: no more writes in autocommit
                outcomes.append((False, exc))
    return outcomes


@contextmanager
def undone_on_error(conn: Conn) -> Iterator[None]:
    """A savepoint: what the block wrote is undone when it raises (the exception goes on)."""
    conn.execute("SAVEPOINT step")
    try:
        yield
    except Exception:
        conn.execute("ROLLBACK TO step")
        raise
    finally:
        conn.execute("RELEASE step")
