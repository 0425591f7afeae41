"""What the store modules share: lookups scoped to an organization, name conflicts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentform.service.errors import conflict, not_found


def fetch_owned(
    conn: sqlite3.Connection,
    table: str,
    row_id: object,
    org_id: str,
    what: str,
    extra_where: str = "",
    extra_args: tuple[Any, ...] = (),
) -> sqlite3.Row:
    """The row of `table` with this id in the caller's organization, else 404.

    Another organization's id is also 404, so existence never leaks (API.md §1).
    """
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM {table} WHERE id = ? AND organization_id = ? {extra_where}",
        (str(row_id), org_id, *extra_args),
    ).fetchone()
    if row is None:
        raise not_found(what)
    return row


def fetch_row(conn: sqlite3.Connection, table: str, row_id: str) -> sqlite3.Row:
    """A row known to exist (just written in this transaction)."""
    row: sqlite3.Row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()
    return row


@contextmanager
def unique_name(what: str, name: str | None) -> Iterator[None]:
    """Turns the database's uniqueness violation into 409 name taken."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        if "UNIQUE" in str(exc):
            raise conflict(f"a {what} named '{name}' already exists") from None
        raise
