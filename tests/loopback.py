"""An ASGI app served over real HTTP on 127.0.0.1 (a port the OS chooses), in a
thread, for tests that need a real socket: a proxy, a wrong base path, a page
that is not JSON."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp


@contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    """The app's origin (`http://127.0.0.1:PORT`) while it serves."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="auto"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    started = threading.Event()

    def wait() -> None:
        while not server.started and thread.is_alive():
            started.wait(0.01)

    wait()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
