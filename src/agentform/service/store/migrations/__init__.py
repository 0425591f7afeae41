"""Versioned schema migrations: numbered steps, one module per step, run on start.

A step is a module `mNNN_name.py` in this package (NNN its number) with a
docstring saying what it does, and `SQL` (a script of statements), `up(conn)`,
or both (SQL first). Adding a step is adding one file: steps are discovered by
number. `upgrade` runs every step the database has not had, in number order,
each in its own transaction together with its row in `schema_version`, so a
step is applied entirely or not at all.

A step that must rebuild a table sets `FOREIGN_KEYS = False`: it then runs with
foreign keys off and the transaction commits only if `foreign_key_check`
finds nothing (SQLite's table-rebuild procedure).

A database written by release 0.1 has the base tables and no `schema_version`
table: it is recognised as being at version 1 and upgraded from there, its
data kept.
"""

from __future__ import annotations

import pkgutil
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import import_module
from types import ModuleType

from agentform.service.clock import wall_now
from agentform.service.start_errors import MigrationError

STEP_NAME = re.compile(r"^m(\d{3})_(\w+)$")
ADOPTED = "adopted: written by release 0.1"


@dataclass(frozen=True)
class Step:
    number: int
    name: str
    module: ModuleType

    @property
    def summary(self) -> str:
        doc = (self.module.__doc__ or self.name).strip()
        return doc.splitlines()[0]

    def apply(self, conn: sqlite3.Connection) -> None:
        script = getattr(self.module, "SQL", None)
        if script:
            run_script(conn, script)
        up = getattr(self.module, "up", None)
        if up is not None:
            up(conn)


def steps(package: str = __name__) -> list[Step]:
    """Every step of `package` (this one), in number order; two of one number is an error."""
    found: dict[int, Step] = {}
    for info in pkgutil.iter_modules(import_module(package).__path__):
        match = STEP_NAME.match(info.name)
        if not match:
            continue
        number = int(match.group(1))
        if number in found:
            raise MigrationError(
                f"two migration steps numbered {number:03d}: {found[number].name}, {info.name}"
            )
        found[number] = Step(number, info.name, import_module(f"{package}.{info.name}"))
    return [found[n] for n in sorted(found)]


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Runs each statement of `script` inside the current transaction.

    (`executescript` would commit first, so it cannot be part of a step's transaction.)
    """
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            conn.execute(pending)
            pending = ""
    if pending.strip() and not pending.strip().startswith("--"):
        raise MigrationError(f"incomplete SQL statement: {pending.strip()[:60]}")


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows if not r[0].startswith("sqlite_")}


def _applied(
    conn: sqlite3.Connection, known: list[Step], now: Callable[[], datetime] | None
) -> set[int]:
    """The steps the database has had; recognises a release 0.1 database on the way."""
    tables = _tables(conn)
    if "schema_version" not in tables:
        base = set(known[0].module.TABLES)
        if tables and not base <= tables:
            raise MigrationError(
                "not a database of the Agent Service (it has tables "
                f"{', '.join(sorted(tables))}, without a schema_version)"
            )
        conn.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL)"
        )
        if base <= tables:
            conn.execute("INSERT INTO schema_version VALUES (1, ?, ?)", (ADOPTED, _stamp(now)))
    return {r[0] for r in conn.execute("SELECT version FROM schema_version")}


def _stamp(now: Callable[[], datetime] | None) -> str:
    """When a step was applied: by the database's clock, else the wall clock."""
    return (now or wall_now)().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def schema_versions(conn: sqlite3.Connection) -> list[int]:
    """The steps recorded in the database, in order."""
    return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def upgrade(
    conn: sqlite3.Connection,
    known: list[Step] | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[int]:
    """Applies every missing step, in order, one transaction each; returns their numbers.

    `conn` must be in autocommit mode (isolation_level None) and not in a transaction.
    `now` stamps each step's `applied_at` (the database's clock; default: the wall clock).
    """
    known = steps() if known is None else known
    conn.execute("BEGIN IMMEDIATE")
    try:
        applied = _applied(conn, known, now)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    newer = sorted(applied - {s.number for s in known})
    if newer:
        raise MigrationError(
            f"the database has schema steps {', '.join(f'{n:03d}' for n in newer)}, which this "
            "version of agentform does not know: it was written by a newer version"
        )
    done = []
    for step in known:
        if step.number in applied:
            continue
        _apply(conn, step, now)
        done.append(step.number)
    return done


def _apply(conn: sqlite3.Connection, step: Step, now: Callable[[], datetime] | None) -> None:
    keys_off = getattr(step.module, "FOREIGN_KEYS", True) is False
    if keys_off:
        conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have applied it since we looked.
        if not conn.execute(
            "SELECT 1 FROM schema_version WHERE version = ?", (step.number,)
        ).fetchone():
            step.apply(conn)
            if keys_off and conn.execute("PRAGMA foreign_key_check").fetchone():
                raise MigrationError(f"step {step.name} leaves rows with broken references")
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)", (step.number, step.name, _stamp(now))
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        if keys_off:
            conn.execute("PRAGMA foreign_keys=ON")
