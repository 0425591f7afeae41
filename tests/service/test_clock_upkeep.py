"""Moving the manual clock costs what falls due on the way, not the simulated time:
upkeep (retention's hourly look) does not stop the clock, it runs at the instants
the clock stops at anyway, as of its last hourly look (docs/service/choices.md#retention).

Before: retention looked every simulated hour, and the clock stopped at each look,
so `advance: 366d` in a workspace test stopped 8,785 times (11-16 s of CPU for one
step; 500 steps, the documented limit, about 1.8 h of CI).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path

from fastapi import FastAPI

from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.service.conftest import running
from tests.service.execution_support import EXEC_KEY, EXEC_SEED, execute
from tests.service.test_retention import counts

DAY = 86400.0
HOUR = 3600.0


def _app(path: Path, delivery_workers: int = 0, retain: timedelta = timedelta(days=1)) -> FastAPI:
    settings = ServiceSettings(retain=retain)
    return create_app(
        path,
        seed=EXEC_SEED,
        clock=ManualClock(),
        settings=settings,
        delivery_workers=delivery_workers,
    )


class Stops:
    """Counts the instants the clock stops at (it publishes each one) and the runner's
    passes over its due jobs, calling through to what the service set."""

    def __init__(self, app: FastAPI) -> None:
        self.instants: list[datetime] = []
        self.passes = 0
        clock, runner = app.state.clock, app.state.runner
        published: Callable[[datetime], Awaitable[None]] | None = clock.published
        run_due = runner.run_due

        async def publish(instant: datetime) -> None:
            self.instants.append(instant)
            if published is not None:
                await published(instant)

        async def counted() -> int:
            self.passes += 1
            return int(await run_due())

        clock.published = publish
        runner.run_due = counted

    def take(self) -> tuple[int, int]:
        taken = (len(self.instants), self.passes)
        self.instants.clear()
        self.passes = 0
        return taken


def _cost_of_moves(app: FastAPI) -> dict[float, tuple[int, int]]:
    """(instants stopped at, runner passes) of a move of 1 day, then of 366, with nothing due."""
    with running(app, EXEC_KEY) as (_, advance):
        advance(0)  # what is due at the start (retention's first look) runs first
        stops = Stops(app)
        cost = {}
        for days in (1.0, 366.0):
            advance(days * DAY)
            cost[days] = stops.take()
    app.state.db.close()
    return cost


def test_a_move_with_nothing_due_costs_the_same_for_a_day_and_a_year(tmp_path: Path) -> None:
    cost = _cost_of_moves(_app(tmp_path / "s.db"))
    assert cost[1.0] == cost[366.0]
    assert cost[366.0][0] == 1  # the end of the move: no stop on the way
    assert cost[366.0][1] <= 3


def test_with_delivery_workers_a_move_costs_the_same_for_a_day_and_a_year(tmp_path: Path) -> None:
    """`service run --clock manual` with workers: each instant is also stored for them."""
    cost = _cost_of_moves(_app(tmp_path / "s.db", delivery_workers=1))
    assert cost[1.0] == cost[366.0]
    assert cost[366.0][0] == 1


def test_waiting_a_year_for_a_condition_that_never_holds_costs_what_a_day_does(
    tmp_path: Path,
) -> None:
    app = _app(tmp_path / "s.db")
    cost = {}
    with running(app, EXEC_KEY) as (api, advance):
        paused = execute(api, api.ids("/agents")["steady"])
        advance(0)
        assert api.post(f"/executions/{paused}/pause").status_code == 200
        advance(0)
        stops = Stops(app)
        for within in ("1d", "366d"):
            body = {"until": f"executions/{paused} is finished", "within": within}
            headers = {"X-Api-Key": EXEC_KEY}
            answer = api.client.post("/agentform/v1/clock/advance", json=body, headers=headers)
            assert answer.json()["met"] is False
            cost[within] = stops.take()
    app.state.db.close()
    assert cost["1d"] == cost["366d"]
    assert cost["366d"][0] <= 2  # what is due at the start, then the window's end


def _history_left(path: Path, moves: list[float]) -> list[dict[str, int]]:
    """Rows of each kind after each of `moves` (seconds), three executions having run
    at the start (a day's retention)."""
    app = _app(path)
    left = []
    with running(app, EXEC_KEY) as (api, advance):
        agent = api.ids("/agents")["steady"]
        for _ in range(3):
            execute(api, agent)
        advance(10)  # done, three seconds in
        for seconds in moves:
            advance(seconds)
            left.append(counts(app))
    app.state.db.close()
    return left


def test_one_move_forgets_what_the_same_move_hour_by_hour_forgets(tmp_path: Path) -> None:
    """Retention looks as of its last hourly look, not the instant the clock stopped at:
    at a day and half an hour the history (a day old, but younger than a day at the last
    look) is still there, an hour later it is gone, whether the clock stopped on the way or not."""
    ends = [DAY + HOUR / 2, HOUR]
    at_once = _history_left(tmp_path / "once.db", ends)
    hourly = _history_left(tmp_path / "hourly.db", [HOUR] * 24 + [HOUR / 2, HOUR])
    assert at_once == hourly[-2:]
    assert at_once[0]["executions"] == 3
    assert at_once[1]["executions"] == 0
