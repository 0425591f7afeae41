"""Several steps in one write transaction, each in its own savepoint (the runtime's
group commit, service/runtime/grouped.py): a step that raises undoes only itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentform.service.store.database import Conn, Database


def run_steps(db: Database, steps: Sequence[Callable[[Conn], Any]]) -> list[tuple[bool, Any]]:
    """(True, result) or (False, the exception) of each step, in order, one commit."""
    outcomes: list[tuple[bool, Any]] = []
    with db.write() as conn:
        for step in steps:
            conn.execute("SAVEPOINT grouped_step")
            try:
                outcomes.append((True, step(conn)))
            except Exception as exc:
                conn.execute("ROLLBACK TO grouped_step")
                outcomes.append((False, exc))
            conn.execute("RELEASE grouped_step")
    return outcomes
