"""Helpers shared by the route modules: lookups scoped to the caller's organization."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import conflict, not_found


def fetch_owned(
    conn: sqlite3.Connection,
    table: str,
    row_id: uuid.UUID,
    org_id: str,
    what: str,
    extra_where: str = "",
    extra_args: tuple[Any, ...] = (),
) -> sqlite3.Row:
    """The row of `table` with this id in the caller's organization, else 404."""
    row = conn.execute(
        f"SELECT * FROM {table} WHERE id = ? AND organization_id = ? {extra_where}",
        (str(row_id), org_id, *extra_args),
    ).fetchone()
    if row is None:
        raise not_found(what)
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
