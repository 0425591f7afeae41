"""A delivery worker process: sends the outbox's webhook deliveries, beside the service.

`agentform service run --delivery-workers N` starts N of these
(`python -m agentform.service.delivery.worker`) on its database and supervises
them (delivery/workers.py). Each runs a `ClaimingRunner` for the delivery job
kind alone, so the process that runs executions only writes the outbox.

- New work: nobody tells a worker that another process scheduled a job; it
  looks at SQLite's `data_version` every `POLL_SECONDS` and runs a pass when
  another connection has committed (and, on the wall clock, when a job it knows
  of falls due).
- A manual clock: the service stores its instant when it moves; the worker's
  `FollowerClock` stands at it (docs/service/internals.md#scaling).
- Stopping: on SIGTERM or SIGINT (the service stops) it takes no new job, gives
  the attempts in flight `STOP_GRACE_SECONDS` to finish and be recorded, and
  abandons the rest, as the service's own runner does (they stay pending: sent
  again after the next start). When its standard input closes instead (the
  service is gone, even killed with -9) it lets them finish, for at most
  `DRAIN_SECONDS`: nobody else will record them. Then it frees what it still
  holds and exits. So no orphan is left, and nothing it sent and recorded is
  sent again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path

from agentform.service.clock import Clock, FollowerClock, WallClock
from agentform.service.delivery.claiming import ClaimingRunner
from agentform.service.delivery.outbox import DELIVERY_JOB
from agentform.service.delivery.sending import DeliveryJob
from agentform.service.runtime.handlers import JobHandlers
from agentform.service.settings import ServiceSettings
from agentform.service.store import claims
from agentform.service.store.database import Database

POLL_SECONDS = 0.002
"""How often a busy worker looks whether another process committed (a read of one
pragma); idle, it looks half as often each time nothing changed, down to IDLE_POLL_SECONDS."""
IDLE_POLL_SECONDS = 0.05
DRAIN_SECONDS = 15.0
"""How long a worker whose service is gone lets its attempts in flight finish."""
STOP_GRACE_SECONDS = 0.5
"""How long a worker told to stop lets them finish (the service stops promptly)."""
SHARED_SETTINGS = ("platform_url", "allow_private_webhooks", "webhook_timeout_seconds")
"""The service's settings a worker is given (on its command line)."""


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agentform-delivery-worker")
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--id", required=True, dest="worker_id")
    parser.add_argument("--clock", choices=("wall", "manual"), default="wall")
    parser.add_argument("--settings", default="{}", help="JSON: the service's shared settings")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    shown = f"delivery worker {args.worker_id}: %(message)s"
    logging.basicConfig(level=logging.WARNING, format=shown)
    settings = ServiceSettings(**json.loads(args.settings))
    clock: Clock = FollowerClock() if args.clock == "manual" else WallClock()
    try:
        db = Database(args.db, now=clock.now)
    except Exception as exc:  # a damaged or newer database: one line, the supervisor says more
        print(f"delivery worker {args.worker_id}: {exc}", file=sys.stderr)
        return 1
    try:
        asyncio.run(work(db, clock, args.worker_id, settings))
    finally:
        db.close()
    return 0


async def work(db: Database, clock: Clock, worker_id: str, settings: ServiceSettings) -> None:
    """Delivers until told to stop; then drains, frees its claims and returns."""
    handlers = JobHandlers()
    handlers.add(DELIVERY_JOB, DeliveryJob())
    runner = ClaimingRunner(db, clock, handlers, settings=settings, worker_id=worker_id)
    stop, orphaned = stop_events()
    await runner.start()
    helpers = [
        asyncio.create_task(watch(db, clock, runner)),
        asyncio.create_task(runner.keep_leases()),
    ]
    try:
        await stop.wait()
        await runner.drain(DRAIN_SECONDS if orphaned.is_set() else STOP_GRACE_SECONDS)
    finally:
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        await runner.stop()
        await asyncio.to_thread(runner.release)


def stop_events() -> tuple[asyncio.Event, asyncio.Event]:
    """(stop, orphaned): stop is set on SIGTERM, SIGINT, or the end of standard input,
    when orphaned is set too (the supervisor is gone)."""
    loop, stop, orphaned = asyncio.get_running_loop(), asyncio.Event(), asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def read_to_end() -> None:
        # os.read, not sys.stdin: a buffered reader's lock held by a daemon thread
        # aborts the interpreter's exit
        with contextlib.suppress(OSError):
            while os.read(sys.stdin.fileno(), 4096):
                pass
        with contextlib.suppress(RuntimeError):  # the loop closed first: stopping anyway
            loop.call_soon_threadsafe(orphaned.set)
            loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read_to_end, name="supervisor-pipe", daemon=True).start()
    return stop, orphaned


async def watch(db: Database, clock: Clock, runner: ClaimingRunner) -> None:
    """Wakes the runner when another process has committed (new work, a new instant)."""
    seen, pause = None, POLL_SECONDS
    while True:
        try:
            version, instant = await asyncio.to_thread(_look, db, isinstance(clock, FollowerClock))
        except Exception:  # a busy database, say: look again
            logging.getLogger("agentform.service.delivery").exception("watching the database")
            version, instant = None, None
        pause = min(IDLE_POLL_SECONDS, pause * 2)
        if version != seen:
            seen, pause = version, POLL_SECONDS
            if instant is not None and isinstance(clock, FollowerClock):
                clock.follow(instant)
            runner.wake.set()
        await asyncio.sleep(pause)


def _look(db: Database, manual: bool) -> tuple[int, datetime | None]:
    with db.read() as conn:
        return claims.data_version(conn), claims.read_instant(conn) if manual else None


if __name__ == "__main__":
    raise SystemExit(main())
