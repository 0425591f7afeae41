"""The service's layering, read from its source (AST, not text search):

- SQL is written and executed only in `service/store/` (docs/service/internals.md#store): no other
  module calls `.execute(`/`.executemany(`/`.executescript(` or holds SQL text;
- the wall clock is read only in `service/clock.py`: everything else
  asks the injected clock, so a test's ManualClock governs all of the service;
- the wire models (`service/models/`) import only pydantic, core/ and rules/;
- the store answers typed rows (dataclasses, models), never `sqlite3.Row`: no
  module outside it names one, and none of its public functions returns one.

Each check is a function of one module's source, proven on planted violations.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentform.service as service_package

SERVICE = Path(service_package.__file__).parent

SQL_METHODS = {"execute", "executemany", "executescript"}
# A string that starts as a statement does: an upper-case keyword, then a word.
SQL_TEXT = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|"
    r"ROLLBACK|WITH|VACUUM)\s+[\w*(]"
)
CLOCK_READS = {
    ("time", "time"),
    ("time", "time_ns"),
    ("time", "monotonic"),
    ("time", "monotonic_ns"),
    ("time", "perf_counter"),
    ("time", "perf_counter_ns"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
}


def modules(*, outside: str) -> Iterator[tuple[str, str]]:
    """(path under service/, source) of every service module not under `outside`."""
    for path in sorted(SERVICE.rglob("*.py")):
        relative = path.relative_to(SERVICE).as_posix()
        if not relative.startswith(outside):
            yield relative, path.read_text(encoding="utf-8")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for statement in node.body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
    return found


def sql_in(source: str) -> list[str]:
    """Where `source` executes SQL or holds SQL text (docstrings aside)."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_METHODS
        ):
            found.append((node.lineno, f".{node.func.attr}("))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and SQL_TEXT.match(node.value)
        ):
            found.append((node.lineno, repr(node.value.strip()[:40])))
    return [f"{line}: {what}" for line, what in sorted(found, key=lambda f: f[0])]


def clock_reads_in(source: str) -> list[str]:
    """Where `source` reads the wall clock itself: `time.monotonic()`,
    `datetime.now(...)`, or such a function imported by name (`from time import time`)."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if ("time", alias.name) in CLOCK_READS
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name | ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else func.value.attr
            if (owner, func.attr) in CLOCK_READS:
                found.append(f"{node.lineno}: {owner}.{func.attr}()")
        elif isinstance(func, ast.Name) and func.id in imported:
            found.append(f"{node.lineno}: {func.id}()")
    return found


def imports_in(source: str) -> set[str]:
    """The agentform modules `source` imports (absolute imports: ruff bans the others)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("agentform")}


def raw_rows_in(source: str, *, public_returns_only: bool) -> list[str]:
    """Where `source` names `sqlite3.Row` (`public_returns_only`: where a public
    function's return annotation does)."""
    tree = ast.parse(source)
    if public_returns_only:
        nodes: list[ast.AST] = [
            node.returns
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("_")
            and node.returns is not None
        ]
    else:
        nodes = [tree]
    lines = sorted(
        found.lineno
        for node in nodes
        for found in ast.walk(node)
        if isinstance(found, ast.Attribute)
        and found.attr == "Row"
        and isinstance(found.value, ast.Name)
        and found.value.id == "sqlite3"
    )
    return [f"{line}: sqlite3.Row" for line in lines]


# -- the checks, on the service ---------------------------------------------------


def test_no_sql_outside_the_store() -> None:
    found = [
        f"service/{path}:{where}"
        for path, source in modules(outside="store/")
        for where in sql_in(source)
    ]
    assert not found, "SQL belongs in service/store/:\n" + "\n".join(found)


def test_the_wall_clock_is_read_only_by_the_service_clock() -> None:
    found = [
        f"service/{path}:{where}"
        for path, source in modules(outside="clock.py")
        for where in clock_reads_in(source)
    ]
    assert not found, "ask the injected clock (service/clock.py):\n" + "\n".join(found)


def test_the_api_client_reads_the_wall_clock_only_through_its_clock() -> None:
    api = SERVICE.parent / "api"
    found = [
        f"api/{path.name}:{where}"
        for path in sorted(api.glob("*.py"))
        if path.name != "clock.py"
        for where in clock_reads_in(path.read_text(encoding="utf-8"))
    ]
    assert not found, "ask agentform.api.clock:\n" + "\n".join(found)


def test_wire_models_sit_at_the_bottom() -> None:
    allowed = ("agentform.core", "agentform.rules", "agentform.service.models")
    found = [
        f"service/{path}: imports {name}"
        for path, source in modules(outside="")
        if path.startswith("models/")
        for name in sorted(imports_in(source))
        if not name.startswith(allowed)
    ]
    assert not found, "\n".join(found)


def test_the_store_answers_typed_rows() -> None:
    outside = [
        f"service/{path}:{where}"
        for path, source in modules(outside="store/")
        for where in raw_rows_in(source, public_returns_only=False)
    ]
    # store/common.py holds the store modules' own helpers (nothing else imports it).
    inside = [
        f"service/{path}:{where}"
        for path, source in modules(outside="")
        if path.startswith("store/") and path != "store/common.py"
        for where in raw_rows_in(source, public_returns_only=True)
    ]
    helpers = [
        f"service/{path}"
        for path, source in modules(outside="store/")
        if "agentform.service.store.common" in imports_in(source)
    ]
    assert not outside + inside + helpers, "a typed row, not sqlite3.Row:\n" + "\n".join(
        outside + inside + helpers
    )


# -- the checks catch what they are for --------------------------------------------

PLANTED_SQL = '''
"""A module that mentions SELECT in its docstring, which is allowed."""
QUERY = "SELECT name FROM agents WHERE id = ?"

def name(conn, agent_id):
    """Reads it; UPDATE here is prose."""
    return conn.execute(QUERY, (agent_id,)).fetchone()

def wipe(db):
    db.executescript(f"DELETE FROM {TABLE}")
'''


def test_sql_in_finds_planted_sql_and_only_it() -> None:
    assert sql_in(PLANTED_SQL) == [
        "3: 'SELECT name FROM agents WHERE id = ?'",
        "7: .execute(",
        "10: .executescript(",
        "10: 'DELETE FROM'",
    ]


@pytest.mark.parametrize(
    "text", ["Select one of these", "Update the pool", "BEGIN", "Delete it", "WITH"]
)
def test_prose_is_not_sql(text: str) -> None:
    assert sql_in(f"message = {text!r}\n") == []


PLANTED_CLOCK = """
import time
from datetime import UTC, datetime
from time import monotonic as tick

def stamp():
    return datetime.now(UTC), time.monotonic(), tick(), time.sleep(0)

def fine(clock):
    return clock.now(), datetime.fromisoformat("2025-01-01"), time.sleep(1)
"""


def test_clock_reads_in_finds_planted_reads_and_only_them() -> None:
    assert clock_reads_in(PLANTED_CLOCK) == [
        "7: datetime.now()",
        "7: time.monotonic()",
        "7: tick()",
    ]


def test_imports_in_sees_what_a_model_imports() -> None:
    planted = "from agentform.service.store import pages\nimport agentform.rules.batches\n"
    assert imports_in(planted) == {"agentform.service.store", "agentform.rules.batches"}


PLANTED_ROWS = """
import sqlite3

def public(conn) -> sqlite3.Row | None:
    return conn.execute("...").fetchone()

def _private(conn) -> sqlite3.Row:
    return conn.execute("...").fetchone()

def typed_from_row(row: sqlite3.Row) -> int:
    return row[0]
"""


def test_raw_rows_in_finds_a_public_function_returning_a_row_and_every_mention() -> None:
    assert raw_rows_in(PLANTED_ROWS, public_returns_only=True) == ["4: sqlite3.Row"]
    assert raw_rows_in(PLANTED_ROWS, public_returns_only=False) == [
        "4: sqlite3.Row",
        "7: sqlite3.Row",
        "10: sqlite3.Row",
    ]
