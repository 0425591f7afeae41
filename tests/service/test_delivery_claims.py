"""Claims on delivery jobs (store/claims.py), as the fair scheduler counts them: a
job another worker process holds is in flight for everyone, until its lease runs
out (docs/service/internals.md#scaling). One database, no process of its own:
the other worker is its claims."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

from fastapi import FastAPI

from agentform.service.clock import MANUAL_START, FollowerClock, wall_now
from agentform.service.delivery import fairness
from agentform.service.delivery.claiming import in_flight
from agentform.service.delivery.fairness import INTEGRATION_SHARE
from agentform.service.delivery.outbox import DELIVERY_JOB
from agentform.service.runtime import ManualClock
from agentform.service.store import claims
from agentform.service.store.events import append_event
from tests.service.conftest import OTHER, OTHER_KEY, TEST_SEED, running
from tests.service.templates import seeded_app

LANES = INTEGRATION_SHARE + 8


def lanes_due(app: FastAPI, url: str, lanes: int) -> None:
    """An integration to `url` taking every event of OTHER's agent, and one event due
    to it on each of `lanes` lanes (an execution's each)."""
    with running(app, OTHER_KEY) as (api, _):
        agent = api.ids("/agents")["other-agent"]
        made = api.post("/webhook-integrations", json={"name": "h", "url": url})
        api.request(
            "PUT", f"/agents/{agent}/webhooks/{made.json()['id']}", json={"eventRules": ["*"]}
        )
    with app.state.db.write() as conn:
        for _ in range(lanes):
            append_event(
                conn,
                organization_id=OTHER,
                agent_id=agent,
                event="EXECUTION_STARTED",
                payload={},
                execution_id=str(uuid.uuid4()),
            )


def test_jobs_another_worker_holds_count_toward_the_share_until_their_lease_ends(
    tmp_path: Path,
) -> None:
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(), runtime=False)
    lanes_due(app, "http://127.0.0.1:9/", LANES)  # a lane per execution
    db, now = app.state.db, app.state.clock.now()
    with db.write() as conn:
        first = fairness.choose(conn, DELIVERY_JOB, now, in_flight(conn, DELIVERY_JOB, set()), 128)
        assert len(first) == INTEGRATION_SHARE  # the integration's share, of LANES due
        held = [job.id for job in first[:10]]
        claims.claim(conn, held, "1-other", wall_now() + timedelta(minutes=1))

        mine = fairness.choose(conn, DELIVERY_JOB, now, in_flight(conn, DELIVERY_JOB, set()), 128)
        assert len(mine) == INTEGRATION_SHARE - 10  # the other worker's ten are in flight
        assert not {job.id for job in mine} & set(held)

        # Its lease ran out (it was killed): the ten are anyone's again.
        later = wall_now() + timedelta(minutes=2)
        assert claims.live_ids(conn, DELIVERY_JOB, later) == set()
        claims.claim(conn, held, "1-other", wall_now() - timedelta(seconds=1))
        again = fairness.choose(conn, DELIVERY_JOB, now, in_flight(conn, DELIVERY_JOB, set()), 128)
        assert set(held) <= {job.id for job in again}

        # A worker's claims are freed at once when it dies, but for those it keeps.
        claims.claim(conn, held, "2-other", wall_now() + timedelta(minutes=1))
        assert claims.release(conn, "2-other", keep=held[:3]) == 7
        assert claims.live_ids(conn, DELIVERY_JOB, wall_now()) == set(held[:3])
        assert claims.held(conn, held[0], "2-other", wall_now())
        assert not claims.held(conn, held[5], "2-other", wall_now())
    db.close()


def test_a_manual_clock_publishes_each_instant_for_the_workers_to_follow(tmp_path: Path) -> None:
    clock = ManualClock()
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=clock, delivery_workers=1)
    db = app.state.db
    with running(app) as (_, advance):
        with db.read() as conn:
            assert claims.read_instant(conn) == MANUAL_START  # stored when the app is made
        advance(90)
        with db.read() as conn:
            instant = claims.read_instant(conn)
    assert instant == clock.now() == MANUAL_START + timedelta(seconds=90)
    follower = FollowerClock()
    follower.follow(instant)
    follower.follow(MANUAL_START)  # an older instant read late: time does not go back
    assert follower.now() == instant and follower.seconds() == 90
    db.close()
