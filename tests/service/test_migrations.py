"""Versioned schema migrations: discovery by number, one transaction per step,
release 0.1 databases recognised and upgraded with their data."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.service import create_app
from agentform.service.start_errors import MigrationError
from agentform.service.store.database import Database
from agentform.service.store.migrations import (
    ADOPTED,
    schema_versions,
    steps,
    upgrade,
)

FIXTURE = Path(__file__).parent / "fixtures" / "service-release-0.1.db"
LATEST = [s.number for s in steps()]


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def write_steps(root: Path, package: str, files: dict[str, str]) -> str:
    """A package of migration steps on sys.path; returns its name."""
    folder = root / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, text in files.items():
        (folder / name).write_text(text)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return package


# Numbers TEAM.md gives to steps of work not merged yet (executions, webhooks, batches):
# the only gaps allowed, until those steps land.
RESERVED = {3, 4, 5}


def test_the_steps_are_numbered_from_one_without_gaps_or_twins() -> None:
    assert set(range(1, LATEST[-1] + 1)) - set(LATEST) <= RESERVED
    assert all(s.summary and s.summary[:3] == f"{s.number:03d}" for s in steps())


def test_a_new_database_gets_every_step_once(tmp_path: Path) -> None:
    db = Database(tmp_path / "new.db")
    assert db.applied_steps == LATEST
    db.close()
    again = Database(tmp_path / "new.db")
    assert again.applied_steps == []
    with again.read() as conn:
        assert schema_versions(conn) == LATEST
    again.close()


def test_a_release_0_1_database_is_recognised_and_upgraded_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "service.db"
    shutil.copyfile(FIXTURE, path)
    with connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "schema_version" not in tables
        before = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("organizations", "profiles", "profile_sets", "profile_set_members")
        }
        templates = conn.execute("SELECT * FROM vault_templates ORDER BY id").fetchall()
    db = Database(path)
    assert db.applied_steps == LATEST[1:]  # 001 is what release 0.1 already had
    with db.read() as conn:
        assert schema_versions(conn) == LATEST
        first = conn.execute("SELECT name FROM schema_version WHERE version = 1").fetchone()
        assert first[0] == ADOPTED
        for table, rows in before.items():
            after = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            # the columns it had, unchanged (later steps may add columns after them)
            assert [tuple(r)[: len(rows[0])] for r in after] == rows, table
        after = conn.execute("SELECT * FROM vault_templates ORDER BY id").fetchall()
        assert [tuple(r) for r in after] == templates
        members = conn.execute("SELECT count(*) FROM profile_set_members").fetchone()[0]
        assert members == 8
    db.close()


def test_adding_a_step_is_adding_a_file(tmp_path: Path) -> None:
    base = Path(__file__).parents[2] / "src/agentform/service/store/migrations/m001_base.py"
    package = write_steps(
        tmp_path,
        "steps_added",
        {
            "m001_base.py": base.read_text(),
            "m002_colour.py": '"""002: pools get a colour."""\n'
            "SQL = \"ALTER TABLE profile_sets ADD COLUMN colour TEXT NOT NULL DEFAULT 'blue';\"\n",
            "notes.py": "this is not a step\n",
        },
    )
    path = tmp_path / "service.db"
    shutil.copyfile(FIXTURE, path)
    with connect(path) as conn:
        assert upgrade(conn, steps(package)) == [2]
        colours = {r[0] for r in conn.execute("SELECT colour FROM profile_sets")}
        assert colours == {"blue"}
        assert upgrade(conn, steps(package)) == []


def test_steps_are_found_and_run_in_number_order(tmp_path: Path) -> None:
    package = write_steps(
        tmp_path,
        "steps_ordered",
        {
            "m003_third.py": "def up(conn):\n    conn.execute(\"INSERT INTO log VALUES ('3')\")\n",
            "m001_first.py": 'TABLES = ("log",)\nSQL = "CREATE TABLE log (step TEXT);"\n',
            "m002_second.py": "def up(conn):\n    conn.execute(\"INSERT INTO log VALUES ('2')\")\n",
        },
    )
    assert [s.number for s in steps(package)] == [1, 2, 3]
    with connect(tmp_path / "x.db") as conn:
        assert upgrade(conn, steps(package)) == [1, 2, 3]
        assert [r[0] for r in conn.execute("SELECT step FROM log")] == ["2", "3"]


def test_two_steps_of_one_number_are_refused(tmp_path: Path) -> None:
    package = write_steps(
        tmp_path, "steps_twins", {"m001_a.py": "SQL = ''\n", "m001_b.py": "SQL = ''\n"}
    )
    with pytest.raises(MigrationError, match="two migration steps numbered 001"):
        steps(package)


def test_a_failing_step_changes_nothing(tmp_path: Path) -> None:
    package = write_steps(
        tmp_path,
        "steps_failing",
        {
            "m001_base.py": 'TABLES = ("a",)\nSQL = "CREATE TABLE a (x);"\n',
            "m002_broken.py": 'SQL = """CREATE TABLE b (x);\nINSERT INTO nowhere VALUES (1);"""',
        },
    )
    with connect(tmp_path / "x.db") as conn:
        with pytest.raises(sqlite3.OperationalError, match="nowhere"):
            upgrade(conn, steps(package))
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "a" in tables and "b" not in tables
        assert schema_versions(conn) == [1]


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    Database(tmp_path / "s.db").close()
    with connect(tmp_path / "s.db") as conn:
        conn.execute("INSERT INTO schema_version VALUES (999, 'm999_future', 'x')")
    with pytest.raises(MigrationError, match=r"999.*newer version"):
        Database(tmp_path / "s.db")


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(b"this is not a database, just text" * 100), "cannot open"),
        (
            lambda p: connect(p).execute("CREATE TABLE invoices (id INTEGER)"),
            "not a database of the Agent Service",
        ),
    ],
)
def test_a_file_that_is_not_a_service_database_is_refused_clearly(
    tmp_path: Path,
    make: Callable[[Path], object],
    words: str,
) -> None:
    path = tmp_path / "other.db"
    make(path)
    with pytest.raises(MigrationError, match=words):
        create_app(path)
    result = CliRunner().invoke(cli, ["service", "run", "--db", str(path), "--port", "0"])
    assert result.exit_code == 1, result.output
    assert words in result.output and "Traceback" not in result.output


def _schema(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    rows = conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    return {(kind, name) for kind, name in rows}


def test_every_table_and_index_is_made_by_a_migration_step(tmp_path: Path) -> None:
    """The schema is the steps' alone: running them on an empty file gives everything a
    running service has (webhook tables by m004), and no store module holds DDL."""
    bare = connect(tmp_path / "steps-only.db")
    upgrade(bare)
    by_steps = _schema(bare)
    bare.close()
    app = create_app(tmp_path / "service.db")
    with app.state.db.read() as conn:
        served = _schema(conn)
    app.state.db.close()
    assert served == by_steps
    webhook_tables = {"webhook_integrations", "webhook_attachments", "webhook_deliveries"}
    assert {("table", name) for name in webhook_tables} <= by_steps
    store = Path(__file__).parents[2] / "src" / "agentform" / "service"
    ddl = [
        str(path.relative_to(store))
        for path in store.rglob("*.py")
        if "migrations" not in path.parts
        and any(word in path.read_text() for word in ("CREATE TABLE", "CREATE INDEX"))
    ]
    assert ddl == []


def test_step_11_counts_the_active_executions_a_database_already_has(tmp_path: Path) -> None:
    """A database written before step 11, with executions in every status of two
    organizations, gets each organization's count of those holding capacity."""
    conn = connect(tmp_path / "old.db")
    upgrade(conn, [s for s in steps() if s.number <= 10])
    statuses = ["queued", "starting", "running", "paused", "awaiting_confirmation"]
    statuses += ["completed", "failed", "cancelled", "running"]
    for org in ("org-a", "org-b"):
        conn.execute("INSERT INTO organizations VALUES (?, ?, 't')", (org, org))
        conn.execute(
            "INSERT INTO agents VALUES (?, ?, 'agent', 1, '[1]', 't', 't')", (f"{org}-agent", org)
        )
    for n, status in enumerate(statuses):
        org = "org-a" if n % 3 else "org-b"
        conn.execute(
            "INSERT INTO executions (id, organization_id, agent_id, agent_name, version, status,"
            " inputs, metadata, request, program, created_at, updated_at)"
            " VALUES (?, ?, ?, 'agent', 1, ?, '{}', '{}', '{}', '[]', 't', 't')",
            (f"e{n}", org, f"{org}-agent", status),
        )
    assert upgrade(conn) == [11, *[n for n in LATEST if n > 11]]
    kept = dict(conn.execute("SELECT organization_id, active FROM execution_active_counts"))
    # org-b has e0 queued, e3 paused, e6 failed; org-a the rest (starting, running twice,
    # awaiting_confirmation, completed, cancelled).
    assert kept == {"org-a": 4, "org-b": 1}
    conn.close()
