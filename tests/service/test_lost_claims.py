"""A delivery worker that lost its claim while it was sending (its lease ran out
while it stalled, and another worker took the job) records nothing of what it
sent; the new claimant sends again and records it: at least once, never a
delivery marked twice (service/delivery/claiming.py). Two `ClaimingRunner`s in
this process on one database, the manual clock, a receiver on loopback."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from fastapi import FastAPI

from agentform.service.clock import wall_now
from agentform.service.delivery.claiming import ClaimingRunner
from agentform.service.delivery.outbox import DELIVERY_JOB
from agentform.service.delivery.sending import DeliveryJob
from agentform.service.runtime import ManualClock
from agentform.service.runtime.handlers import JobHandlers
from agentform.service.store import claims
from tests.service.conftest import TEST_SEED
from tests.service.templates import seeded_app
from tests.service.test_delivery_claims import lanes_due
from tests.webhooks.receiver import HANG, Receiver, running_receiver


def _worker(app: FastAPI, worker_id: str) -> ClaimingRunner:
    handlers = JobHandlers()
    handlers.add(DELIVERY_JOB, DeliveryJob())
    return ClaimingRunner(app.state.db, app.state.clock, handlers, worker_id=worker_id)


def _deliveries(app: FastAPI) -> list[tuple[str, int]]:
    with app.state.db.read() as conn:
        rows = conn.execute("SELECT status, attempts FROM webhook_deliveries").fetchall()
    return [(row["status"], row["attempts"]) for row in rows]


def _claimant(app: FastAPI) -> list[str]:
    with app.state.db.read() as conn:
        rows = conn.execute("SELECT claimed_by FROM jobs WHERE claimed_by IS NOT NULL").fetchall()
    return [row["claimed_by"] for row in rows]


async def _send_while_the_claim_is_taken(app: FastAPI, receiver: Receiver) -> None:
    stalled, taker = _worker(app, "1-stalled"), _worker(app, "2-taker")
    await stalled.start()
    try:
        await stalled.run_due()
        (job_id,) = stalled._io  # the one job it claimed and is sending
        # The receiver holds the request: meanwhile the lease runs out and another
        # worker claims the job (as `claims.claim` does once the lease is past).
        await asyncio.to_thread(receiver.wait_for, 1)
        with app.state.db.write() as conn:
            claims.claim(conn, [job_id], "2-taker", wall_now() + timedelta(seconds=60))
        receiver.release.set()
        await asyncio.gather(*stalled.io_tasks)
        assert _deliveries(app) == [("pending", 0)]  # the stalled worker recorded nothing
        assert _claimant(app) == ["2-taker"]
    finally:
        await stalled.stop()

    await taker.start()
    try:
        await taker.run_due()
        await asyncio.gather(*taker.io_tasks)
    finally:
        await taker.stop()


def test_a_worker_whose_claim_was_taken_records_nothing_and_the_taker_sends_again(
    tmp_path: Path,
) -> None:
    app = seeded_app(tmp_path / "s.db", seed=TEST_SEED, clock=ManualClock(), runtime=False)
    with running_receiver() as receiver:
        lanes_due(app, receiver.url, 1)
        receiver.answer(HANG)
        asyncio.run(_send_while_the_claim_is_taken(app, receiver))
        assert len(receiver.wait_for(2)) == 2  # sent by both: at least once
    assert _deliveries(app) == [("delivered", 1)]  # recorded once, by the claimant
    app.state.db.close()
