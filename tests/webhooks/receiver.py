"""A webhook receiver on loopback for tests: records every request's raw bytes and
headers, and answers from a script (statuses in turn, or hang until released)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

HANG = -1
"""A scripted answer: do not answer until the receiver is released or closed."""


@dataclass(frozen=True)
class Received:
    path: str
    headers: httpx.Headers  # case-insensitive, as HTTP header names are
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def event(self) -> str | None:
        body = self.json()
        return body.get("info", {}).get("event") if isinstance(body, dict) else None


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog is 5: more connections at once (a runner sends up
    # to 16 lanes of one integration together) and Linux drops the SYNs past it, which
    # the client sends again only a second later, then three: real seconds that a
    # test on a manual clock would have to wait out.
    request_queue_size = 128


class Receiver:
    """`script` answers the requests in turn; after it runs out, `default` answers."""

    def __init__(self, default: int = 204) -> None:
        self.default = default
        self.keep_alive = True  # False: every answer closes its connection
        self.script: list[int] = []
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    headers = httpx.Headers(self.headers.items())
                    receiver.received.append(Received(self.path, headers, body))
                    status = receiver.script.pop(0) if receiver.script else receiver.default
                    receiver.arrived.notify_all()
                if status == HANG:
                    receiver.release.wait()
                    status = 204
                try:
                    self.send_response(status)
                    if 300 <= status < 400:
                        self.send_header("Location", "/redirected")
                    self.send_header("Content-Length", "0")
                    if not receiver.keep_alive:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up and closed the connection

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def answer(self, *statuses: int) -> None:
        with self.lock:
            self.script = list(statuses)

    def clear(self) -> None:
        with self.lock:
            self.received.clear()
            self.script.clear()

    def events(self) -> list[str | None]:
        with self.lock:
            return [r.event for r in self.received]

    def wait_for(self, count: int, timeout: float = 60.0) -> list[Received]:
        """Blocks (really) until `count` requests arrived: receipt is real I/O, which
        takes what it takes on a loaded machine; `timeout` only ends a wait for a
        request that never comes (a passing test never reaches it)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def running_receiver(default: int = 204) -> Iterator[Receiver]:
    receiver = Receiver(default)
    receiver.thread.start()
    try:
        yield receiver
    finally:
        receiver.close()


@contextmanager
def listen_process(*args: str, env: dict[str, str] | None = None) -> Iterator[Any]:
    """`agentform webhook listen --port 0 ARGS` as a process with its output piped;
    yields it once its first line ("Listening on URL ...") is read, `.url` set."""
    import os
    import subprocess
    import sys

    command = [sys.executable, "-m", "agentform", "webhook", "listen", "--port", "0", *args]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("Listening on http://127.0.0.1:"), first
        process.url = first.split()[2]  # type: ignore[attr-defined]
        process.first_line = first  # type: ignore[attr-defined]
        yield process
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
