"""The embedded Agent Service as an ASGI app: `create_app` wires it together.

The app's lifespan starts and stops its runtime runner (time-driven work). An
ASGI server runs the lifespan; `httpx.ASGITransport` does not, so in-process
clients use `service.http.inprocess.InProcessTransport`, which starts the runner on
the client's own event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import httpx
from fastapi import FastAPI

from agentform.rules.paths import API_PATH
from agentform.service.batches.scheduler import fill_everywhere
from agentform.service.console import install_console
from agentform.service.errors import install_error_handlers
from agentform.service.executions.lifecycle import dispatch_everywhere
from agentform.service.executions.script import prepare as prepare_scripts
from agentform.service.http.openapi import install_openapi
from agentform.service.http.ratelimit import RateLimitMiddleware
from agentform.service.job_handlers import service_handlers
from agentform.service.routes import routers
from agentform.service.runtime import Clock, JobHandlers, ManualClock, Runner, WallClock
from agentform.service.runtime.elsewhere import Elsewhere
from agentform.service.settings import ServiceSettings
from agentform.service.start_errors import UnhandledJobKind
from agentform.service.startup.presets import install_presets
from agentform.service.startup.seed import load_seed
from agentform.service.startup.seed_file import DEMO_SEED, Seed
from agentform.service.store import claims, jobs
from agentform.service.store.database import Database
from agentform.service.store.organizations import load_keys
from agentform.service.upkeep.retention import schedule_retention

BASE_PATH = API_PATH


def create_app(
    db_path: str | Path,
    seed: Seed | None = DEMO_SEED,
    rate_limit: float | None = None,
    clock: Clock | None = None,
    settings: ServiceSettings | None = None,
    runtime: bool = True,
    webhook_transport: httpx.AsyncBaseTransport | None = None,
    delivery_workers: int = 0,
) -> FastAPI:
    """The service over the SQLite file `db_path`, with `seed` loaded (idempotently).

    `clock` governs timestamps and time-driven work (default: the wall clock);
    `settings` (default: every setting's default) are the app's
    (`app.state.settings`) and the runtime's handlers' (`RunContext.settings`).
    With `runtime=False` no due work is done, ever: the runner is never started
    and the start-up catch-up (dispatching queued executions, filling batches) is
    skipped, so reading the state changes none of it (`endpoint: local` commands).
    `webhook_transport` carries webhook deliveries instead of the network (`agentform
    test` puts its in-process receivers there).
    `delivery_workers`: how many worker processes send the webhook deliveries (the
    caller starts them: delivery/workers.py); 0: this app's runner sends them.
    """
    clock = clock or WallClock()
    if runtime:  # executions will run: their scripts' worker starts meanwhile
        prepare_scripts()
    handlers = _handlers(clock, delivery_workers)
    db, seed_loaded = _open_database(db_path, seed, clock, handlers if runtime else None)
    app = FastAPI(
        title="Agent Service",
        version="v1",
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/docs",
        redoc_url=None,
        lifespan=_lifespan,
        # `/agent-profile-pools/` is an unknown path: 404 with the error body, not a 307.
        redirect_slashes=False,
    )
    app.state.db = db
    app.state.seed_loaded = seed_loaded  # this start loaded it (not held already)
    app.state.clock = clock
    settings = settings or ServiceSettings()
    if webhook_transport is not None:
        settings = settings.model_copy(update={"webhook_transport": webhook_transport})
    app.state.settings = settings
    if runtime:
        with db.write() as conn:
            schedule_retention(conn, settings.retain)
        if delivery_workers > 0:
            _share_clock(db, clock)
    app.state.runner = Runner(db, clock, handlers, settings=settings)
    app.state.runtime = runtime
    app.state.delivery_workers = delivery_workers
    _include_routes(app)
    install_console(app)
    install_error_handlers(app)
    install_openapi(app)
    if rate_limit:
        app.add_middleware(RateLimitMiddleware, rate=rate_limit, clock=clock)
    return app


def _handlers(clock: Clock, delivery_workers: int) -> JobHandlers:
    """The service's handlers; with delivery workers, the delivery jobs are theirs
    (watched here on a manual clock, whose instant they follow: `_share_clock`)."""
    if delivery_workers <= 0:
        return service_handlers()
    return service_handlers(deliveries=Elsewhere(watch=isinstance(clock, ManualClock)))


def _share_clock(db: Database, clock: Clock) -> None:
    """A manual clock's instant, stored now and whenever it moves, for the workers."""
    if not isinstance(clock, ManualClock):
        return

    def store(instant: datetime) -> None:
        with db.write() as conn:
            claims.write_instant(conn, instant)

    async def publish(instant: datetime) -> None:
        await asyncio.to_thread(store, instant)

    store(clock.now())
    clock.published = publish


def _open_database(
    db_path: str | Path, seed: Seed | None, clock: Clock, handlers: JobHandlers | None
) -> tuple[Database, bool]:
    """The database with its presets, seed and keys loaded and, with the runtime's
    `handlers`, every pending job's kind checked and the work that fell due while
    the service was down started; whether the seed was loaded now. A page SQLite
    cannot read on the way (a damaged file) stops start-up in one line."""
    db = Database(db_path, now=clock.now)
    try:
        loaded = _load(db, seed, handlers)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise db.unreadable(exc) from None
    return db, loaded


def _load(db: Database, seed: Seed | None, handlers: JobHandlers | None) -> bool:
    with db.write() as conn:
        install_presets(conn)
    loaded = load_seed(db, seed) if seed is not None else False
    load_keys(db)
    if handlers is not None:
        _check_kinds(db, handlers)
        with db.write() as conn:
            dispatch_everywhere(conn)
            fill_everywhere(conn)
    return loaded


def _check_kinds(db: Database, handlers: JobHandlers) -> None:
    """Refuses (UnhandledJobKind) pending jobs that no handler would ever run."""
    with db.read() as conn:
        pending = jobs.pending_kinds(conn)
    try:
        handlers.require(pending)
    except UnhandledJobKind:
        db.close()
        raise


def _include_routes(app: FastAPI) -> None:
    """Every route module's routes, on the app's own router: each router already
    serves under its path (`gate.api_router`, `gate.agentform_router`). Not
    `include_router`, which keeps a router a level of its own: FastAPI matches a
    request against every level on the way to its route, and again as each hands
    it down (a quarter of a short list's CPU, not counting the HTTP parsing)."""
    for router in routers():
        app.router.routes.extend(router.routes)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    runner: Runner = app.state.runner
    if app.state.runtime:
        await runner.start()
    try:
        yield
    finally:
        await runner.stop()
