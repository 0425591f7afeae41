"""`store.common.RowModel` reads a row's columns by their positions in the row's own
layout: rows of queries that select the same columns in other orders, or more of
them, read into the same models, whichever layout it met first."""

from __future__ import annotations

import sqlite3

from pydantic import BaseModel

from agentform.service.store.common import RowModel


class Thing(BaseModel):
    id: str
    displayName: str
    active: bool


ROWS = [("t-1", 'quote " and \\ backslash', 1), ("t-2", "naïve café ✓", 0)]
LAYOUTS = [
    "SELECT id, display_name, active FROM things ORDER BY id",
    "SELECT active, display_name, id FROM things ORDER BY id",
    "SELECT rowid, * FROM things ORDER BY id",
]


def test_rows_read_alike_in_every_column_layout() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE things (extra TEXT, active INTEGER, display_name TEXT, id TEXT)")
    conn.executemany("INSERT INTO things VALUES ('x', ?, ?, ?)", [r[::-1] for r in ROWS])
    read = RowModel(Thing, active=lambda row: bool(row["active"]))
    expected = [Thing(id=i, displayName=n, active=bool(a)) for i, n, a in ROWS]
    for layouts in (LAYOUTS, LAYOUTS[::-1]):
        fresh = RowModel(Thing, active=lambda row: bool(row["active"]))
        for sql in layouts:
            rows = conn.execute(sql).fetchall()
            assert fresh.many(rows) == expected, sql
            assert [read(row) for row in rows] == expected, sql
    assert read.many([]) == []
