"""Running the service over HTTP with uvicorn (`agentform service run`)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import FastAPI

from agentform.service.app import BASE_PATH, create_app
from agentform.service.clock import ManualClock, wall_now
from agentform.service.delivery.workers import WorkerPool
from agentform.service.http.binding import CONSOLE_PATH, console_mode
from agentform.service.http.timeouts import TimedConfig
from agentform.service.runtime import Runner, exclusive
from agentform.service.settings import READ_TIMEOUT_SECONDS, RETAIN, ServiceSettings
from agentform.service.start_errors import PortInUse
from agentform.service.startup.seed_file import DEMO_ADMIN_KEY, DEMO_SEED, read_seed
from agentform.service.store import claims
from agentform.service.store.database import Database


def base_url(host: str, port: int, path: str = BASE_PATH) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


MANUAL_BANNER = (
    "clock: manual, standing at the time it started; move it with "
    "`agentform service advance 2m --endpoint {url}` (an admin API key)"
)

GRACE_SECONDS = 1
"""How long a stopping server lets requests in flight finish before cancelling them."""


def serve(
    host: str,
    port: int,
    db_path: Path,
    seed_path: Path | None,
    rate_limit: float | None,
    say: Callable[[str], None],
    *,
    manual: bool = False,
    read_timeout: float = READ_TIMEOUT_SECONDS,
    allow_private_webhooks: bool = False,
    retain: timedelta | None = RETAIN,
    console: bool = True,
    delivery_workers: int = 0,
) -> None:
    """Loads the seed (raising SeedError) and takes the port (raising PortInUse),
    both before saying anything or creating the database, then serves until
    SIGINT or SIGTERM, and returns once stopped."""
    seed = read_seed(seed_path) if seed_path else DEMO_SEED
    sock = listening_socket(host, port)
    port = sock.getsockname()[1]  # the one bound: --port 0 lets the OS choose
    stop = StopRequest()
    try:
        # The lock before a word is said (a second server on the database is refused);
        # from the signals on, a signal during start-up counts too.
        with exclusive.held(db_path), stop.on_signals():
            settings = ServiceSettings(
                platform_url=base_url(host, port),  # links in notifications point here
                read_timeout_seconds=read_timeout,
                allow_private_webhooks=allow_private_webhooks,
                retain=retain,
                console=console_mode(host, console),
            )
            # Whole seconds: the times it shows (and `service advance` prints) read cleanly.
            clock = ManualClock(start=wall_now().replace(microsecond=0)) if manual else None
            app = create_app(
                db_path,
                seed=seed,
                rate_limit=rate_limit,
                settings=settings,
                clock=clock,
                delivery_workers=delivery_workers,
            )
            pool = None
            try:
                pool = worker_pool(app.state.db, delivery_workers, settings, manual, say)
                say(f"Agent Service on {(url := base_url(host, port))} (database {db_path})")
                demo, loaded = seed_path is None, app.state.seed_loaded
                announce(say, url, demo, loaded, rate_limit, manual, settings, pool)
                StoppableServer.of(app, read_timeout, stop, pool).run(sockets=[sock])
            finally:
                if pool is not None:
                    pool.stop()
                app.state.db.close()
        say("Agent Service stopped (pending work resumes on the next start)")
    finally:
        sock.close()


def announce(
    say: Callable[[str], None],
    url: str,
    demo: bool,
    loaded: bool,
    rate_limit: float | None,
    manual: bool,
    settings: ServiceSettings,
    pool: WorkerPool | None,
) -> None:
    """The banner's lines after the address: the seed (`loaded` by this start, or
    held already), the limits, the clock, the switches, where deliveries are sent."""
    if demo:
        held = "demo seed loaded" if loaded else "demo seed already in the database"
        say(f"{held}; admin API key: {DEMO_ADMIN_KEY}")
    if rate_limit:
        say(f"rate limit: {rate_limit:g} requests/s per API key")
    if manual:
        say(MANUAL_BANNER.format(url=url))
    if settings.allow_private_webhooks:
        say("webhooks may point at link-local and cloud-metadata addresses")
    if settings.console != "off":
        say(f"console: {url.removesuffix(BASE_PATH)}{CONSOLE_PATH}/ (sign in with an API key)")
    if pool is not None:
        say(f"delivery workers: {len(pool.slots)} (pids {pool.shown_pids})")
    else:
        say("deliveries: sent by this process (--delivery-workers 0)")


def worker_pool(
    db: Database, count: int, settings: ServiceSettings, manual: bool, say: Callable[[str], None]
) -> WorkerPool | None:
    """The delivery workers, started (None when deliveries are sent in-process)."""
    if count <= 0:
        return None

    def release(worker_id: str) -> None:
        with db.write() as conn:
            claims.release(conn, worker_id)

    pool = WorkerPool(count, db.path, settings, release, manual=manual, say=say)
    pool.start()
    return pool


class StopRequest:
    """SIGINT or SIGTERM, caught from start-up on, whatever the process inherited: a
    script's `agentform service run &` starts with SIGINT ignored, and Python's own
    handler would raise KeyboardInterrupt wherever the main thread happens to be."""

    def __init__(self) -> None:
        self.requested = False
        self.server: uvicorn.Server | None = None

    def handle(self, sig: int, frame: FrameType | None) -> None:
        self.requested = True
        if self.server is not None:
            self.server.handle_exit(sig, frame)  # a second Ctrl-C forces the exit

    @contextlib.contextmanager
    def on_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # only the main thread can take signals (an embedding caller stops it)
            return
        previous = {sig: signal.signal(sig, self.handle) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StoppableServer(uvicorn.Server):
    """uvicorn's server, told to stop by a StopRequest. On stopping, the runtime runner
    stops first, so no new attempt starts and attempts in flight are abandoned (their
    jobs stay pending and run after the next start), and the delivery workers are
    told to stop (they do the same: delivery/worker.py); then the requests in flight
    get GRACE_SECONDS to finish. The signal is not raised again afterwards
    (uvicorn would, turning a clean stop into a KeyboardInterrupt)."""

    def __init__(
        self, config: uvicorn.Config, runner: Runner, stop: StopRequest, pool: WorkerPool | None
    ) -> None:
        super().__init__(config)
        self.runner = runner
        self.pool = pool
        stop.server = self
        self.should_exit = stop.requested

    @classmethod
    def of(
        cls, app: FastAPI, read_timeout: float, stop: StopRequest, pool: WorkerPool | None
    ) -> StoppableServer:
        """The server of a service's app, with its read timeout and shutdown grace."""
        grace = GRACE_SECONDS
        config = TimedConfig(
            app, read_timeout=read_timeout, log_level="warning", timeout_graceful_shutdown=grace
        )
        return cls(config, app.state.runner, stop, pool)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # StopRequest has them

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.runner.stop()
        if self.pool is not None:  # the workers stop while the requests finish
            await asyncio.to_thread(self.pool.terminate)
        await super().shutdown(sockets)


def listening_socket(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise PortInUse(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"{host}:{port} is in use (another service running?); choose another --port"
            ) from None
        raise PortInUse(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return sock
