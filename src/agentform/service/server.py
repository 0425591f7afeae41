"""Running the service over HTTP with uvicorn (`agentform service run`)."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from ..errors import AgentformError
from .app import BASE_PATH, create_app
from .delivery.outbox import PLATFORM_URL
from .seed import DEMO_ADMIN_KEY, DEMO_SEED, read_seed


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{BASE_PATH}"


def serve(
    host: str,
    port: int,
    db_path: Path,
    seed_path: Path | None,
    rate_limit: float | None,
    say: Callable[[str], None],
) -> None:
    """Loads the seed (raising SeedError) and takes the port (raising PortInUse),
    both before saying anything, then serves until stopped."""
    seed = read_seed(seed_path) if seed_path else DEMO_SEED
    sock = listening_socket(host, port)
    try:
        # Links in webhook notifications point at this server.
        settings = {PLATFORM_URL: base_url(host, port)}
        app = create_app(db_path, seed=seed, rate_limit=rate_limit, settings=settings)
        say(f"Agent Service on {base_url(host, port)} (database {db_path})")
        if seed_path is None:
            say(f"demo seed loaded; admin API key: {DEMO_ADMIN_KEY}")
        if rate_limit:
            say(f"rate limit: {rate_limit:g} requests/s per API key")
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        sock.close()


class PortInUse(AgentformError):
    """The address to serve on is taken (or not ours to take)."""


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
