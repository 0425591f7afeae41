"""The runtime on the manual clock: due order, work scheduled by work, durability
across a restart, failing handlers, I/O handlers, lanes, keys."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentform.service.runtime import (
    IoJobHandler,
    JobHandlers,
    ManualClock,
    RunContext,
    Runner,
)
from agentform.service.settings import ServiceSettings
from agentform.service.startup.seed import load_seed
from agentform.service.store import events, jobs
from agentform.service.store.database import Conn, Database
from agentform.service.store.jobs import Job
from tests.service.conftest import ACME, TEST_SEED

AGENT = "agent-1"
T0 = datetime.fromisoformat("2025-03-01T12:00:00+00:00")

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def note(conn: Conn, what: str, **payload: Any) -> None:
    """A handler's visible effect: an event in the same transaction."""
    events.append_event(
        conn,
        organization_id=ACME,
        agent_id=AGENT,
        event=what,
        payload={"at": conn.now_iso(), **payload},
    )


def notes(db: Database) -> list[tuple[str, str]]:
    with db.read() as conn:
        return [(e.event, e.payload["at"]) for e in events.list_events(conn)]


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_handlers() -> JobHandlers:
    handlers = JobHandlers()

    @handlers.handler("note")
    def _note(job: Job, conn: Conn, _: RunContext) -> None:
        note(conn, job.payload["name"])

    @handlers.handler("chain")
    def _chain(job: Job, conn: Conn, _: RunContext) -> None:
        n = job.payload["n"]
        note(conn, f"chain-{n}")
        if n < job.payload["last"]:
            step = job.payload["step"]
            jobs.schedule(
                conn, "chain", conn.now() + timedelta(seconds=step), {**job.payload, "n": n + 1}
            )

    @handlers.handler("settings")
    def _settings(job: Job, conn: Conn, context: RunContext) -> None:
        note(conn, context.settings.platform_url)

    @handlers.handler("boom")
    def _boom(job: Job, conn: Conn, _: RunContext) -> None:
        note(conn, "half-done")  # rolled back with the failure
        raise RuntimeError("the handler broke")

    return handlers


def open_db(path: Path, clock: ManualClock) -> Database:
    db = Database(path, now=clock.now)
    load_seed(db, TEST_SEED)
    return db


@asynccontextmanager
async def running(
    path: Path, clock: ManualClock, handlers: JobHandlers | None = None
) -> AsyncIterator[tuple[Database, Runner]]:
    db = open_db(path, clock)
    runner = Runner(
        db, clock, handlers or make_handlers(), settings=ServiceSettings(platform_url="hello")
    )
    await runner.start()
    try:
        yield db, runner
    finally:
        await runner.stop()
        db.close()


def schedule(db: Database, kind: str, after: float, **payload: Any) -> int:
    with db.write() as conn:
        return jobs.schedule(conn, kind, conn.now() + timedelta(seconds=after), payload)


async def test_jobs_run_in_due_order_each_at_its_time(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        schedule(db, "note", 5, name="e")
        schedule(db, "note", 1, name="a")
        schedule(db, "note", 3, name="c")
        schedule(db, "note", 1, name="b")  # same time as a: the order scheduled
        await clock.advance(10)
        assert notes(db) == [("a", at(1)), ("b", at(1)), ("c", at(3)), ("e", at(5))]
        assert clock.now() == T0 + timedelta(seconds=10)


async def test_nothing_runs_before_it_is_due_and_advance_zero_runs_what_is_due(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        schedule(db, "note", 0, name="now")
        schedule(db, "note", 2, name="later")
        assert notes(db) == []  # the manual clock runs nothing by itself
        await clock.advance(0)
        assert notes(db) == [("now", at(0))]
        await clock.advance(1.999)
        assert [n for n, _ in notes(db)] == ["now"]
        await clock.advance(0.001)
        assert [n for n, _ in notes(db)] == ["now", "later"]


async def test_work_scheduled_by_work_runs_when_it_falls_due_within_the_window(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        schedule(db, "chain", 1, n=1, last=10, step=1)
        schedule(db, "chain", 0, n=100, last=101, step=0)  # schedules its next due at once
        await clock.advance(3.5)
        assert notes(db) == [
            ("chain-100", at(0)),
            ("chain-101", at(0)),
            ("chain-1", at(1)),
            ("chain-2", at(2)),
            ("chain-3", at(3)),
        ]
        with db.read() as conn:
            (left,) = jobs.list_jobs(conn, status="pending")
        assert (left.payload["n"], left.due_at) == (4, T0 + timedelta(seconds=4))


async def test_a_failing_handler_is_recorded_and_the_runner_goes_on(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, runner):
        failing = schedule(db, "boom", 1)
        schedule(db, "note", 2, name="after")
        await clock.advance(3)
        assert notes(db) == [("after", at(2))]  # the failed job's write was rolled back
        with db.read() as conn:
            job = jobs.get_job(conn, failing)
        assert job is not None and job.status == "failed"
        assert job.error == "RuntimeError: the handler broke"
        assert runner.running


async def test_pending_jobs_resume_after_a_restart_and_done_jobs_do_not_rerun(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    clock = ManualClock(T0)
    async with running(path, clock) as (db, _):
        for i in (1, 2, 3):
            schedule(db, "note", i, name=f"n{i}")
        await clock.advance(1.5)
        assert [n for n, _ in notes(db)] == ["n1"]
    # Stopped with n2 and n3 pending; a new process starts on the same file later on.
    later = ManualClock(T0 + timedelta(seconds=2.5))
    async with running(path, later) as (db, _):
        await later.advance(0)
        assert notes(db) == [("n1", at(1)), ("n2", at(2.5))]  # overdue: runs at once
        await later.advance(1)
        assert [n for n, _ in notes(db)] == ["n1", "n2", "n3"]
        with db.read() as conn:
            assert [j.status for j in jobs.list_jobs(conn)] == ["done"] * 3


async def test_a_job_commits_with_the_state_change_that_caused_it_or_not_at_all(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with pytest.raises(ValueError), db.write() as conn:
            jobs.schedule(conn, "note", clock.now(), {"name": "never"})
            raise ValueError("the request failed after scheduling")
        await clock.advance(1)
        assert notes(db) == []
        with db.read() as conn:
            assert jobs.list_jobs(conn) == []


async def test_scheduling_under_a_key_replaces_and_cancel_drops(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:
            jobs.schedule(conn, "note", clock.now() + timedelta(seconds=1), {"name": "v1"}, key="k")
            jobs.schedule(conn, "note", clock.now() + timedelta(seconds=2), {"name": "v2"}, key="k")
            jobs.schedule(conn, "note", clock.now() + timedelta(seconds=1), {"name": "x"}, key="x")
            assert jobs.cancel(conn, "x")
            assert not jobs.cancel(conn, "x")
            pending = jobs.pending_job(conn, "k")
        assert pending is not None and pending.payload == {"name": "v2"}
        await clock.advance(5)
        assert notes(db) == [("v2", at(2))]


# -- I/O handlers -------------------------------------------------------------


class Receiver:
    """What an I/O handler talks to: records calls; can be made to hang."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.hang: set[str] = set()
        self.gate: asyncio.Event | None = None
        self.round_trip = 0.001  # real seconds a call takes (a loaded machine: longer)


def io_handlers(receiver: Receiver) -> JobHandlers:
    handlers = make_handlers()

    @handlers.io_handler("send")
    class Send(IoJobHandler[str, str]):
        def prepare(self, job: Job, conn: Conn, _: RunContext) -> str | None:
            name: str = job.payload["name"]
            return None if name == "skip" else name

        async def perform(self, job: Job, prepared: str, context: RunContext) -> str:
            prepared = prepared.partition(">")[0]  # "a>b": a now, b once a is recorded
            if prepared == "explode":
                raise ConnectionError("no route to receiver")
            if receiver.gate is not None:
                await receiver.gate.wait()
            call = asyncio.ensure_future(self._call(prepared))
            timeout = asyncio.ensure_future(context.clock.sleep(10))
            done, _ = await asyncio.wait({call, timeout}, return_when=asyncio.FIRST_COMPLETED)
            for t in (call, timeout):
                t.cancel()
            return "ok" if call in done else "timeout"

        async def _call(self, name: str) -> None:
            await asyncio.sleep(receiver.round_trip)  # a real round trip
            if name in receiver.hang:
                await asyncio.Event().wait()
            receiver.calls.append(name)

        def record(
            self, job: Job, conn: Conn, prepared: str, outcome: str, context: RunContext
        ) -> str | None:
            first, _, rest = prepared.partition(">")
            note(conn, f"{first}:{outcome}")
            return rest or None  # the job's next work, if any

    return handlers


async def test_an_io_job_whose_record_hands_back_work_performs_it_at_once(
    tmp_path: Path,
) -> None:
    clock, receiver = ManualClock(T0), Receiver()
    async with running(tmp_path / "s.db", clock, io_handlers(receiver)) as (db, _):
        schedule(db, "send", 1, name="a>b>c")
        await clock.advance(1)
        assert receiver.calls == ["a", "b", "c"]
        assert notes(db) == [("a:ok", at(1)), ("b:ok", at(1)), ("c:ok", at(1))]
        with db.read() as conn:  # one job did it all, and is done once
            assert [job.status for job in jobs.list_jobs(conn, kind="send")] == ["done"]


async def test_an_io_job_records_its_outcome_and_is_done_in_that_transaction(
    tmp_path: Path,
) -> None:
    clock, receiver = ManualClock(T0), Receiver()
    async with running(tmp_path / "s.db", clock, io_handlers(receiver)) as (db, _):
        sent = schedule(db, "send", 1, name="hello")
        skipped = schedule(db, "send", 1, name="skip")
        failed = schedule(db, "send", 1, name="explode")
        await clock.advance(1)
        assert receiver.calls == ["hello"]
        assert notes(db) == [("hello:ok", at(1))]
        with db.read() as conn:
            statuses = [jobs.get_job(conn, i).status for i in (sent, skipped, failed)]  # type: ignore[union-attr]
            error = jobs.get_job(conn, failed).error  # type: ignore[union-attr]
        assert statuses == ["done", "done", "failed"]
        assert error == "ConnectionError: no route to receiver"


async def test_io_waiting_on_the_clock_times_out_when_the_clock_passes_it(tmp_path: Path) -> None:
    # A round trip far longer than `settle`, as on a loaded machine: how long "fine"
    # takes in real time must not matter, as the clock stays at T0 until it is done.
    clock, receiver = ManualClock(T0, settle=0.05), Receiver()
    receiver.hang.add("stuck")
    receiver.round_trip = 0.3
    async with running(tmp_path / "s.db", clock, io_handlers(receiver)) as (db, _):
        schedule(db, "send", 0, name="stuck")
        schedule(db, "send", 0, name="fine")
        await clock.advance(0)  # both start; time does not move
        await until(lambda: notes(db) == [("fine:ok", at(0))])
        await clock.advance(9)
        assert notes(db) == [("fine:ok", at(0))]
        await clock.advance(1)
        assert notes(db) == [("fine:ok", at(0)), ("stuck:timeout", at(10))]


async def until(condition: Callable[[], bool], limit: float = 60.0) -> None:
    """Waits (real time) for work the clock does not drive: a real round trip. The
    limit only stops a broken test; a slow machine passes."""
    deadline = asyncio.get_running_loop().time() + limit
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.01)


async def test_jobs_of_one_lane_run_one_at_a_time_in_due_order(tmp_path: Path) -> None:
    clock, receiver = ManualClock(T0), Receiver()
    async with running(tmp_path / "s.db", clock, io_handlers(receiver)) as (db, _):
        with db.write() as conn:
            for name in ("first", "second", "third"):
                jobs.schedule(conn, "send", clock.now(), {"name": name}, lane="receiver-1")
            jobs.schedule(conn, "send", clock.now(), {"name": "other"}, lane="receiver-2")
        await clock.advance(0)
        lane_one = [c for c in receiver.calls if c != "other"]
        assert lane_one == ["first", "second", "third"]
        assert sorted(receiver.calls) == ["first", "other", "second", "third"]


async def test_io_in_flight_at_a_stop_stays_pending_and_runs_once_after_the_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    clock, receiver = ManualClock(T0), Receiver()
    receiver.gate = asyncio.Event()  # holds every perform until opened
    async with running(path, clock, io_handlers(receiver)) as (db, runner):
        schedule(db, "send", 0, name="held")
        await runner.run_due()
        assert len(runner.io_tasks) == 1
    assert receiver.calls == []
    receiver.gate.set()
    async with running(path, clock, io_handlers(receiver)) as (db, _):
        await clock.advance(0)
        assert receiver.calls == ["held"]
        assert notes(db) == [("held:ok", at(0))]
        with db.read() as conn:
            assert [j.status for j in jobs.list_jobs(conn)] == ["done"]


async def test_a_handler_reads_the_apps_settings_from_its_run_context(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        schedule(db, "settings", 0)
        await clock.advance(0)
        assert notes(db) == [("hello", at(0))]


async def test_a_naive_due_time_is_refused_rather_than_taken_for_local_time(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with pytest.raises(ValueError, match="naive"), db.write() as conn:
            jobs.schedule(conn, "note", datetime(2025, 3, 1, 12), {"name": "x"})
        with db.read() as conn:
            assert jobs.list_jobs(conn) == []


# -- the due-job pass -----------------------------------------------------------


async def test_jobs_scheduling_later_work_do_not_each_cost_a_read_of_all_due_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass runs the jobs it has read; a job one of them schedules, due no earlier
    than the next in hand, waits for the next read instead of forcing one at once."""
    reads = 0
    plain = jobs.due_jobs

    def counted(*args: Any, **kwargs: Any) -> list[Job]:
        nonlocal reads
        reads += 1
        return plain(*args, **kwargs)

    monkeypatch.setattr(jobs, "due_jobs", counted)
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:
            for n in range(50):  # each schedules its successor, due a second later
                jobs.schedule(conn, "chain", T0, {"n": n, "last": n + 1, "step": 1})
        await clock.advance(0)
        assert len(notes(db)) == 50
        assert reads < 10  # a read or two per pass ran all fifty (reading after each: 50+)
        await clock.advance(1)
        assert len(notes(db)) == 100


async def test_a_job_scheduled_due_before_the_next_in_hand_runs_before_it(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0 + timedelta(seconds=10))
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:  # overdue (as after a restart), each at its own time
            for n, due in ((1, 1), (3, 2.5), (5, 4)):  # chain-n schedules chain-(n+1) at due + 1
                payload = {"n": n, "last": n + 1, "step": due + 1 - 10}
                jobs.schedule(conn, "chain", T0 + timedelta(seconds=due), payload)
            jobs.schedule(conn, "note", T0 + timedelta(seconds=3), {"name": "three"})
        await clock.advance(0)
        order = [n for n, _ in notes(db)]
        assert order == ["chain-1", "chain-2", "chain-3", "three", "chain-4", "chain-5", "chain-6"]


async def test_transactional_jobs_due_together_share_write_transactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:
            for n in range(50):
                jobs.schedule(conn, "chain", T0, {"n": n, "last": n + 1, "step": 1})
        writes = 0
        plain = db.write

        def counted() -> Any:
            nonlocal writes
            writes += 1
            return plain()

        monkeypatch.setattr(db, "write", counted)
        await clock.advance(0)
        assert len(notes(db)) == 50
        assert writes < 10  # a transaction each: 50


async def test_a_failing_job_among_jobs_sharing_a_transaction_is_undone_alone(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock) as (db, _):
        with db.write() as conn:
            jobs.schedule(conn, "note", T0, {"name": "before"})
            failing = jobs.schedule(conn, "boom", T0)
            jobs.schedule(conn, "note", T0, {"name": "after"})
        await clock.advance(0)
        assert [n for n, _ in notes(db)] == ["before", "after"]  # not "half-done"
        with db.read() as conn:
            assert [j.status for j in jobs.list_jobs(conn)] == ["done", "failed", "done"]
            assert jobs.get_job(conn, failing).error == "RuntimeError: the handler broke"  # type: ignore[union-attr]


async def test_a_shared_transaction_that_fails_runs_each_job_once_in_order(
    tmp_path: Path,
) -> None:
    handlers = make_handlers()

    @handlers.handler("rogue")
    def _rogue(job: Job, conn: Conn, _: RunContext) -> None:
        note(conn, "rogue")
        conn.execute("ROLLBACK")  # ends the transaction it shares with others

    clock = ManualClock(T0)
    async with running(tmp_path / "s.db", clock, handlers) as (db, _):
        with db.write() as conn:
            jobs.schedule(conn, "note", T0, {"name": "first"})
            rogue = jobs.schedule(conn, "rogue", T0)
            for name in ("second", "third"):
                jobs.schedule(conn, "note", T0, {"name": name})
        await clock.advance(0)
        assert [n for n, _ in notes(db)] == ["first", "second", "third"]
        with db.read() as conn:
            assert jobs.get_job(conn, rogue).status == "failed"  # type: ignore[union-attr]
