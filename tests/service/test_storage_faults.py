"""The service's storage failing under it: a full disk, a damaged database.

A full disk is simulated with SQLite's `max_page_count` on every connection of the
service (the database cannot grow past its size when the limit was set), not with a
real full disk. Before: every write answered `500 internal server error`, the log
alone said `database or disk is full`; a database with damaged pages stopped
start-up with a raw traceback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from tempfile import SpooledTemporaryFile

import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette import formparsers

from agentform.cli.main import cli
from agentform.service import create_app
from agentform.service.start_errors import MigrationError
from agentform.service.store.database import Conn
from tests.service.conftest import TEST_SEED, Api, assert_error


def _full(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on the database cannot grow: every connection (one a thread) gets a
    `max_page_count` of the pages it has."""
    db = app.state.db
    db.close()  # connections are made again, each with the limit
    db.closing = False  # and the database used again (a close is final in the service)
    connect = db._connection

    def limited() -> Conn:
        conn: Conn = connect()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(db, "_connection", limited)


@pytest.fixture
def full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FastAPI, Api]]:
    app = create_app(tmp_path / "service.db", seed=TEST_SEED)
    api = Api(TestClient(app))
    _full(app, monkeypatch)
    yield app, api
    app.state.db.close()


def test_a_write_to_a_full_disk_is_507_naming_the_cause_and_reads_still_work(
    full: tuple[FastAPI, Api],
) -> None:
    app, api = full
    before = api.get("/profiles").json()["total"]
    answers = [api.post("/profiles", json={"name": f"n{i}" + "x" * 200}) for i in range(60)]
    refused = [r for r in answers if r.status_code != 201]
    assert refused, "the database never filled up"
    body = assert_error(refused[0], 507, "storage is full", "nothing was written")
    assert "sqlite" not in refused[0].text.lower() and "Traceback" not in refused[0].text
    assert body["code"] == 507
    made = sum(r.status_code == 201 for r in answers)
    listed = api.get("/profiles", params={"pageSize": 100})
    assert listed.status_code == 200 and listed.json()["total"] == before + made
    with app.state.db.read() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _damage_table(path: Path, table: str) -> None:
    """Overwrites the root page of `table` with garbage, as a failing disk would."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        query = "SELECT rootpage FROM sqlite_master WHERE name = ?"
        root = conn.execute(query, (table,)).fetchone()
    conn.close()
    with path.open("r+b") as file:
        file.seek((root[0] - 1) * page_size)
        file.write(b"\xa5" * page_size)


def test_a_database_with_damaged_pages_stops_start_up_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "service.db"
    create_app(path, seed=TEST_SEED).state.db.close()
    _damage_table(path, "api_keys")  # read at start-up, after the schema's own tables
    with pytest.raises(MigrationError) as caught:
        create_app(path, seed=TEST_SEED)
    message = str(caught.value)
    assert str(path) in message and "malformed" in message and "backup" in message
    assert "\n" not in message
    result = CliRunner().invoke(cli, ["service", "run", "--db", str(path), "--port", "0"])
    assert result.exit_code == 1, result.output
    assert "malformed" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


class _SpoolingToAFullDisk(SpooledTemporaryFile):  # type: ignore[type-arg]
    """Starlette's spooled upload, whose file on disk is /dev/full: past the spool's
    size every write fails as the kernel fails it on a full disk (ENOSPC)."""

    def rollover(self) -> None:
        if getattr(self, "_rolled", True):
            return
        spooled = self._file.getvalue()  # type: ignore[attr-defined]  # a BytesIO till now
        self._file = open("/dev/full", "wb+", buffering=0)  # noqa: SIM115 (the spool owns it)
        self._file.write(spooled)
        self._rolled = True


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_an_upload_to_a_full_disk_is_507_not_500(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload spools its files past 1 MiB to disk before they reach the database."""
    app = create_app(tmp_path / "service.db", seed=TEST_SEED)
    api = Api(TestClient(app))
    monkeypatch.setattr(formparsers, "SpooledTemporaryFile", _SpoolingToAFullDisk)
    answer = api.post("/temp-files", files=[("files", ("big.bin", b"x" * (2 << 20)))])
    assert_error(answer, 507, "disk")
    assert api.get("/profiles").status_code == 200  # reads still work
    app.state.db.close()
