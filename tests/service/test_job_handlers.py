"""The service's job handlers: registered in one place, every kind it schedules handled,
and a kind nobody handles an error (at start-up, and if one is scheduled later)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentform.service as service_package
from agentform.service import create_app
from agentform.service.job_handlers import service_handlers
from agentform.service.runtime import Done, IoJobHandler, JobHandlers, ManualClock, RunContext
from agentform.service.start_errors import UnhandledJobKind
from agentform.service.store import jobs
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job
from tests.service.conftest import TEST_SEED
from tests.service.test_runtime import T0, note, notes, running

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def job_kinds_named_in(source: str) -> set[str]:
    """The values of module-level `SOMETHING_JOB = "kind"` constants."""
    return {
        node.value.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id.endswith("_JOB") for t in node.targets)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def test_every_job_kind_the_service_names_has_its_handler() -> None:
    root = Path(service_package.__file__).parent
    named = set()
    for path in root.rglob("*.py"):
        named |= job_kinds_named_in(path.read_text(encoding="utf-8"))
    assert named >= {"webhook.delivery", "execution.step", "batch.release"}  # it reads them
    assert set(service_handlers().kinds()) == named


def test_a_kind_is_registered_once() -> None:
    handlers = service_handlers()
    with pytest.raises(ValueError, match="already has a handler"):
        handlers.add("webhook.delivery", lambda job, conn, context: None)


def test_a_database_with_pending_jobs_nobody_handles_does_not_start(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    app = create_app(path, seed=TEST_SEED, clock=ManualClock(T0))
    with app.state.db.write() as conn:
        jobs.schedule(conn, "report.weekly", T0, {})  # from a newer agentform, say
        jobs.schedule(conn, "execution.step", T0, {"executionId": "gone"})
    app.state.db.close()
    with pytest.raises(UnhandledJobKind, match=r"no handler for job kind 'report\.weekly'"):
        create_app(path, seed=TEST_SEED, clock=ManualClock(T0))
    # Reading the state (no runtime: nothing would run them anyway) still works.
    reader = create_app(path, seed=TEST_SEED, runtime=False)
    with reader.state.db.read() as conn:
        assert {"execution.step", "report.weekly"} <= set(jobs.pending_kinds(conn))
    reader.state.db.close()


async def test_a_job_of_a_kind_nobody_handles_scheduled_later_is_recorded_failed(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:
            unknown = jobs.schedule(conn, "nobody.handles", T0, {})
            jobs.schedule(conn, "note", T0, {"name": "after"})
        await clock.advance(0)
        with db.read() as conn:
            job = jobs.get_job(conn, unknown)
        assert job is not None and job.status == "failed"
        assert "no handler for job kind 'nobody.handles'" in (job.error or "")
        assert [name for name, _ in notes(db)] == ["after"]  # the runner went on


def handing_over() -> JobHandlers:
    """An I/O job that, once done, hands its key to a successor (as a webhook lane does)."""
    handlers = JobHandlers()

    @handlers.io_handler("lane")
    class Lane(IoJobHandler[int, None]):
        def prepare(self, job: Job, conn: Conn, context: RunContext) -> int:
            return int(job.payload["left"])

        async def perform(self, job: Job, prepared: int, context: RunContext) -> None:
            return None

        def record(
            self, job: Job, conn: Conn, prepared: int, outcome: None, context: RunContext
        ) -> Done | None:
            note(conn, f"sent-{prepared}")
            if prepared == 0:
                return None
            later = conn.now()

            def successor(then: Conn) -> None:
                jobs.schedule(then, "lane", later, {"left": prepared - 1}, key="the-lane")

            return Done(successor)

    return handlers


async def test_a_done_job_hands_its_key_to_its_successor(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock, handing_over()) as (db, _):
        with db.write() as conn:
            jobs.schedule(conn, "lane", T0, {"left": 2}, key="the-lane")
        await clock.advance(0)
        assert [name for name, _ in notes(db)] == ["sent-2", "sent-1", "sent-0"]
        with db.read() as conn:
            statuses = [job.status for job in jobs.list_jobs(conn, kind="lane")]
        assert statuses == ["done", "done", "done"]  # each done (not cancelled by the next)


def rescheduling() -> JobHandlers:
    """A transactional job that schedules its next run under its own key (as an
    execution's step job does)."""
    handlers = JobHandlers()

    @handlers.handler("tick")
    def tick(job: Job, conn: Conn, context: RunContext) -> None:
        left = int(job.payload["left"])
        note(conn, f"tick-{left}")
        if left > 0:
            jobs.schedule(conn, "tick", conn.now(), {"left": left - 1}, key="the-tick")

    return handlers


async def test_a_transactional_job_that_schedules_its_successor_under_its_key_is_done(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock, rescheduling()) as (db, _):
        with db.write() as conn:
            jobs.schedule(conn, "tick", T0, {"left": 2}, key="the-tick")
        await clock.advance(0)
        assert [name for name, _ in notes(db)] == ["tick-2", "tick-1", "tick-0"]
        with db.read() as conn:
            statuses = [job.status for job in jobs.list_jobs(conn, kind="tick")]
        assert statuses == ["done", "done", "done"]  # not cancelled by its own successor


def test_nothing_in_the_service_is_imported_for_its_side_effects() -> None:
    """A handler registered by importing its module (`import x  # noqa: F401`) runs
    only where someone remembered the import: registration is job_handlers.py's."""
    root = Path(service_package.__file__).parent
    found = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(root.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "noqa: F401" in line
    ]
    assert not found
