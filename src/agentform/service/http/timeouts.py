"""How long the service waits for a client (docs/service/limits.md#read-timeouts).

A client that opens a connection and then sends its headers, or its body, slower
than it promised holds a connection and a task for as long as the server waits:
uvicorn waits forever (1,100 such connections were held for minutes). Two
timeouts, like a web server's, end them:

- the headers of a request must arrive within `read_timeout` seconds of its
  first byte (or of the connection, for a client that sends nothing): else the
  answer is 408 with the usual error body and the connection is closed. This is
  `TimedH11Protocol`, the HTTP protocol of `agentform service run`;
- each part of a body must arrive within `read_timeout` seconds of the one
  before (a slow upload on a slow link still gets through; a body shorter than
  its Content-Length does not): else 408. This is `receive_within`, used by the
  request gate, so it holds for any transport.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from starlette.exceptions import HTTPException
from starlette.types import Message, Receive
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol

from agentform.service.settings import READ_TIMEOUT_SECONDS

HEADERS_TOO_SLOW = "the request's headers did not arrive in time"
BODY_TOO_SLOW = "the request body did not arrive in time (sent less than its Content-Length?)"


def receive_within(receive: Receive, seconds: float) -> Receive:
    """`receive`, answering 408 when the next part of the body takes longer than `seconds`."""

    async def timed() -> Message:
        try:
            # A timeout scope, not wait_for: no task made per part of every body.
            async with asyncio.timeout(seconds):
                return await receive()
        except TimeoutError:
            # An HTTPException passes through FastAPI's body reading unchanged.
            # Closed after the answer: the rest of the body may still come.
            raise HTTPException(408, BODY_TOO_SLOW, {"Connection": "close"}) from None

    return timed


class TimedConfig(Config):
    """uvicorn's configuration with the service's read timeout and protocol."""

    def __init__(self, app: Any, read_timeout: float = READ_TIMEOUT_SECONDS, **kwargs: Any) -> None:
        super().__init__(app, http=TimedH11Protocol, **kwargs)
        self.read_timeout = read_timeout


class TimedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose headers are late."""

    def __init__(self, config: Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.read_timeout = float(getattr(config, "read_timeout", READ_TIMEOUT_SECONDS))
        self.headers_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watching()
        super().connection_lost(exc)

    def _watch_headers(self) -> None:
        """Armed while a request's headers are awaited (h11: the client is IDLE with
        bytes of a request begun, or a new connection); disarmed once they are in."""
        waiting = self.conn.their_state is h11.IDLE and not self._responding()
        if not waiting:
            self._stop_watching()
        elif self.headers_timer is None:
            self.headers_timer = self.loop.call_later(self.read_timeout, self._headers_late)

    def _responding(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _stop_watching(self) -> None:
        if self.headers_timer is not None:
            self.headers_timer.cancel()
            self.headers_timer = None

    def _headers_late(self) -> None:
        self.headers_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self._responding():
            return
        body = json.dumps({"code": 408, "message": HEADERS_TOO_SLOW}).encode()
        head = (
            "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(head.encode() + body)
        self.transport.close()
