"""The runtime inside the app: started by the lifespan, by the in-process transport
(`endpoint: local`) on the client's loop, on the wall clock; and events."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.api.connect import Endpoint
from agentform.cli.endpoint import open_client
from agentform.core.sensitive import Sensitive
from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.runtime import ManualClock, RunContext
from agentform.service.store import events, jobs
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job
from tests.service.conftest import ACME, ADMIN_KEY, TEST_SEED, running
from tests.service.templates import seeded_app

RAN: dict[str, threading.Event] = {}


NOTE = "test.runtime-app.note"


def handle_notes(app: FastAPI) -> FastAPI:
    """The app, its runner handling NOTE jobs too (the service's own kinds are
    registered in service/job_handlers.py)."""
    app.state.runner.handlers.add(NOTE, _note)
    return app


def _note(job: Job, conn: Conn, _: RunContext) -> None:
    events.append_event(
        conn,
        organization_id=job.payload["org"],
        agent_id="agent",
        event=job.payload["name"],
        payload={"at": conn.now_iso()},
    )
    if job.payload["name"] in RAN:
        RAN[job.payload["name"]].set()


def schedule(db: object, name: str, org: str = ACME, after: float = 0) -> None:
    with db.write() as conn:  # type: ignore[attr-defined]
        jobs.schedule(
            conn,
            NOTE,
            conn.now() + timedelta(seconds=after),
            {"name": name, "org": org},
        )


def names(db: object) -> list[str]:
    with db.read() as conn:  # type: ignore[attr-defined]
        return [e.event for e in events.list_events(conn)]


def test_the_lifespan_runs_the_runner_and_a_manual_clock_drives_it(tmp_path: Path) -> None:
    app = handle_notes(seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock()))
    assert not app.state.runner.running  # no lifespan yet
    with running(app) as (api, advance):
        assert app.state.runner.running
        schedule(app.state.db, "in-two-seconds", after=2)
        advance(1)
        assert names(app.state.db) == []
        advance(1)
        assert names(app.state.db) == ["in-two-seconds"]
        assert api.get("/context").status_code == 200
    assert not app.state.runner.running
    app.state.db.close()


def test_timestamps_come_from_the_apps_clock(tmp_path: Path) -> None:
    clock = ManualClock()
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=clock)
    client = TestClient(app)
    made = client.post(
        "/agents/v2/agent-profile-pools",
        json={"name": "p"},
        headers={"X-Api-Key": ADMIN_KEY},
    ).json()
    assert made["createdAt"] == "2025-01-01T00:00:00.000000Z"
    app.state.db.close()


def test_on_the_wall_clock_work_scheduled_now_runs_without_being_polled(tmp_path: Path) -> None:
    RAN["wall"] = threading.Event()
    app = handle_notes(seeded_app(tmp_path / "s.db", seed=TEST_SEED))
    with TestClient(app):
        schedule(app.state.db, "wall")  # the commit wakes the runner
        assert RAN["wall"].wait(10)
    assert names(app.state.db) == ["wall"]
    app.state.db.close()


def test_the_in_process_client_runs_the_runner_on_its_own_loop(tmp_path: Path) -> None:
    RAN["local"] = threading.Event()

    async def go() -> None:
        client = open_client(
            Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), tmp_path, run_due_work=True
        )
        transport = client.sender.transport
        assert isinstance(transport, InProcessTransport)
        app = handle_notes(transport.service)
        assert (await client.request("GET", "/context"))["organizationName"] == "demo"
        runner = app.state.runner
        assert runner.running and runner._loop is asyncio.get_running_loop()
        org = (await client.request("GET", "/context"))["organizationId"]
        schedule(app.state.db, "local", org=org)
        assert await asyncio.to_thread(RAN["local"].wait, 10)
        await client.aclose()
        assert not runner.running

    asyncio.run(go())
    # The database was closed and its work kept: a new service sees the event.
    app = create_app(tmp_path / ".agentform" / "service.db")
    assert names(app.state.db) == ["local"]
    app.state.db.close()


def test_the_in_process_client_runs_no_due_work_unless_asked(tmp_path: Path) -> None:
    async def go() -> None:
        client = open_client(Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), tmp_path)
        transport = client.sender.transport
        assert isinstance(transport, InProcessTransport)
        app = transport.service
        org = (await client.request("GET", "/context"))["organizationId"]
        schedule(app.state.db, "not-run", org=org)
        await client.request("GET", "/context")
        assert not app.state.runner.running
        await client.aclose()

    asyncio.run(go())
    app = create_app(tmp_path / ".agentform" / "service.db", runtime=False)
    assert names(app.state.db) == []
    app.state.db.close()


def test_an_event_commits_with_its_transaction_and_subscribers_run_inside_it(
    tmp_path: Path,
) -> None:
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED)
    db = app.state.db
    seen: list[tuple[str, bool]] = []

    @events.event_subscriber
    def count(conn: Conn, event: events.Event) -> None:
        if event.organization_id == ACME:
            seen.append((event.event, conn.in_transaction))

    try:
        with db.write() as conn:
            first = events.append_event(
                conn,
                organization_id=ACME,
                agent_id="a1",
                execution_id="e1",
                event="EXECUTION_STARTED",
                payload={"x": 1},
                metadata={"team": "blue"},
            )
        with pytest.raises(RuntimeError), db.write() as conn:
            events.append_event(conn, organization_id=ACME, agent_id="a1", event="LOST", payload={})
            raise RuntimeError("rolled back")
        with db.write() as conn:
            events.append_event(
                conn, organization_id=ACME, agent_id="a1", batch_id="b1", event="B", payload={}
            )
    finally:
        events._subscribers.pop(f"{count.__module__}.{count.__qualname__}")
    with db.read() as conn:
        by_execution = events.list_events(conn, execution_id="e1")
        everything = events.list_events(conn, organization_id=ACME)
    assert [e.id for e in by_execution] == [first]
    assert by_execution[0].metadata == {"team": "blue"}
    assert by_execution[0].payload == {"x": 1}
    assert [e.event for e in everything] == ["EXECUTION_STARTED", "B"]
    assert seen == [("EXECUTION_STARTED", True), ("LOST", True), ("B", True)]
    db.close()


def test_the_service_over_http_runs_the_runner_too(tmp_path: Path) -> None:
    """uvicorn runs the lifespan: checked through the ASGI lifespan protocol itself."""

    async def go() -> bool:
        app = create_app(tmp_path / "s.db", seed=TEST_SEED)
        async with app.router.lifespan_context(app):
            running = bool(app.state.runner.running)
        app.state.db.close()
        return running and not app.state.runner.running

    assert asyncio.run(go())


def test_the_database_and_its_wal_files_are_created_private(tmp_path: Path) -> None:
    """They hold webhook header values: 0600 whatever the umask (as `service run --db`)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        app = create_app(tmp_path / "new" / "s.db", seed=TEST_SEED)
        schedule(app.state.db, "written")  # a write: the -wal and -shm exist now
        files = sorted((tmp_path / "new").iterdir())
        assert [f.name for f in files] == ["s.db", "s.db-shm", "s.db-wal"]
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {
            f.name: 0o600 for f in files
        }
        app.state.db.close()
    finally:
        os.umask(old)
