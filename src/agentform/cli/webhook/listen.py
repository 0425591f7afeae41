"""`agentform webhook listen`: a local receiver for trying webhook handlers.

Like `stripe listen`: it verifies every delivery against the organization's
public key, prints one line per notification as it arrives, answers at once
(204 when the signature verifies, 401 with the error body when it does not,
as a receiver must: docs/service/contract.md#signatures), and optionally forwards the
exact request (bytes and headers) to a handler being developed, printing its answer.

Captures (`--save DIR`) are the request's headers, a blank line and the exact
body bytes; `agentform webhook verify` reads them back. Only verified requests
are saved (`--save-unverified`: every one), each in a new file: a capture is
created, never written over an existing file or through a symbolic link (a
name taken is skipped for the next). A request body over MAX_BODY_BYTES is
refused (413) unread, and neither saved nor forwarded. Header values an
integration may set (any header but the few the service itself owns) are
secrets: they are read as `Sensitive`, so captures and lines show the mask and
only the forwarded request carries the value.

Forwards go through one queue and one worker, in the order the notifications
came, each after the previous one's answer: a handler sees an execution's
events in the order the service sent them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import httpx

from agentform.core.sensitive import Sensitive, reveal
from agentform.output.webhook_lines import forward_line, notification_line
from agentform.rules.signatures import SIGNATURE_HEADER, verify
from agentform.rules.webhook_integrations import REFUSED_HEADERS

# Headers that describe one hop and are not forwarded as they came.
_HOP_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})
Headers = Mapping[str, str | Sensitive]


def received_headers(headers: Mapping[str, str]) -> dict[str, str | Sensitive]:
    """The request's headers, each value an integration could have set marked Sensitive:
    every header but those the service sets itself and an integration may not."""
    return {
        name: value if name.lower() in REFUSED_HEADERS else Sensitive(value)
        for name, value in headers.items()
    }


MAX_BODY_BYTES = 4 << 20
"""The largest notification the listener takes: far over any the service sends."""

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def capture_bytes(headers: Headers, body: bytes) -> bytes:
    """Headers (sensitive values masked), a blank line, the exact body."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode("latin-1") + b"\r\n" + body


def write_capture(path: Path, headers: Headers, body: bytes) -> None:
    """Creates `path` with the capture; FileExistsError when anything is there (a file,
    a symbolic link, even one leading nowhere): nothing is written over or through."""
    fd = os.open(path, _CREATE, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(capture_bytes(headers, body))


CAPTURE_NAME = re.compile(r"^(\d{5,})\.http$")


def next_capture_number(directory: Path) -> int:
    """The number after the highest `NNNNN.http` in `directory` (1 when there is none)."""
    numbers = (
        (CAPTURE_NAME.match(p.name) for p in directory.iterdir()) if directory.is_dir() else ()
    )
    return max((int(m.group(1)) for m in numbers if m), default=0) + 1


def read_capture(data: bytes) -> tuple[dict[str, str], bytes] | None:
    """(headers, body) of a capture, or None when the data is not one."""
    for separator in (b"\r\n\r\n", b"\n\n"):
        head, found, body = data.partition(separator)
        if not found:
            continue
        headers: dict[str, str] = {}
        for line in head.decode("latin-1").splitlines():
            if line.upper().startswith(("POST ", "PUT ")):  # a request line, if saved
                continue
            name, colon, value = line.partition(":")
            if not colon or not name.strip():
                return None
            headers[name.strip().lower()] = value.strip()
        return headers, body
    return None


@dataclass
class Listener:
    """The receiving end; `say` prints a line (the CLI flushes each one)."""

    public_key_pem: str
    say: Callable[[str], None]
    forward_to: str | None = None
    save_dir: Path | None = None
    save_unverified: bool = False  # also save requests whose signature does not verify
    _numbers: count[int] = field(default_factory=lambda: count(1))

    def __post_init__(self) -> None:
        if self.save_dir is not None:  # after the captures already there: never over them
            self._numbers = count(next_capture_number(self.save_dir))

    _forwarder: httpx.AsyncClient | None = None
    _queue: asyncio.Queue[tuple[Headers, bytes]] | None = None
    _worker: asyncio.Task[None] | None = None

    def receive(self, headers: Headers, body: bytes, path: str = "/") -> tuple[int, bytes, bool]:
        """Judges one request: (status, response body, verified); prints its line, which
        names the path it came to (integrations of one service may share the listener)."""
        signature = headers.get(SIGNATURE_HEADER.lower()) or headers.get(SIGNATURE_HEADER)
        if isinstance(signature, Sensitive):  # never: the service owns this header
            signature = None
        verified = verify(body, signature, self.public_key_pem)
        clock = time.strftime("%H:%M:%S")
        self.say(notification_line(clock, path, body, verified, signed=bool(signature)))
        if self.save_dir is not None and (verified or self.save_unverified):
            self._save(headers, body)
        if verified:
            return 204, b"", True
        message = "missing signature" if not signature else "invalid signature"
        return 401, json.dumps({"code": 401, "message": message}).encode(), False

    def _save(self, headers: Headers, body: bytes, tries: int = 100) -> None:
        """Into the next free NNNNN.http; a name someone else took meanwhile is skipped.
        A capture that cannot be written is a line, not the end of the listener."""
        assert self.save_dir is not None
        for _ in range(tries):
            path = self.save_dir / f"{next(self._numbers):05d}.http"
            try:
                write_capture(path, headers, body)
            except FileExistsError:
                continue
            except OSError as exc:
                self.say(f"  -> not saved: cannot write {path}: {exc.strerror}")
                return
            return
        self.say(f"  -> not saved: {tries} names in {self.save_dir} were taken")

    def enqueue(self, headers: Headers, body: bytes) -> None:
        """Queues a forward behind those received before it (on the serving loop)."""
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.get_running_loop().create_task(self._forward_all())
        self._queue.put_nowait((headers, body))

    async def _forward_all(self) -> None:
        assert self._queue is not None
        while True:
            headers, body = await self._queue.get()
            await self.forward(headers, body)

    async def forward(self, headers: Headers, body: bytes) -> None:
        assert self.forward_to is not None
        if self._forwarder is None:
            self._forwarder = httpx.AsyncClient(timeout=10.0, trust_env=False)
        # The one place a header value is revealed: the request that carries it on.
        sent = {k: reveal(v) for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
        try:
            response = await self._forwarder.post(self.forward_to, content=body, headers=sent)
            self.say(forward_line(self.forward_to, response.status_code))
        except httpx.HTTPError as exc:
            self.say(forward_line(self.forward_to, None, failure=type(exc).__name__))

    def asgi_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        async def endpoint(request: Request) -> Response:
            body = await _bounded_body(request)
            if body is None:
                self.say(
                    f"{time.strftime('%H:%M:%S')}  {request.url.path}  refused: its body is "
                    f"over {MAX_BODY_BYTES >> 20} MiB (not read, saved or forwarded)"
                )
                message = f"the body is over {MAX_BODY_BYTES >> 20} MiB"
                content = json.dumps({"code": 413, "message": message}).encode()
                return Response(content, status_code=413, media_type="application/json")
            headers = received_headers(request.headers)
            status, content, _ = self.receive(headers, body, request.url.path)
            if self.forward_to:
                self.enqueue(headers, body)
            media = "application/json" if content else None
            return Response(content, status_code=status, media_type=media)

        return Starlette(routes=[Route("/{path:path}", endpoint, methods=["POST"])])

    async def close(self) -> None:
        """Stops forwarding: forwards not sent yet are dropped (the listener is stopping)."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        if self._forwarder is not None:
            await self._forwarder.aclose()


async def _bounded_body(request: Any) -> bytes | None:
    """The request's body, or None when it is over MAX_BODY_BYTES (said by its
    Content-Length, or found while reading: the rest is not read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before serving so a taken port is a clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    # Listening now, not when the server starts, so a delivery sent as soon as the
    # banner is printed waits in the backlog instead of being refused.
    sock.listen(128)
    return sock


async def serve(listener: Listener, sock: socket.socket) -> None:
    """Serves until cancelled (Ctrl-C)."""
    import uvicorn

    config = uvicorn.Config(listener.asgi_app(), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    try:
        await server.serve(sockets=[sock])
    finally:
        await listener.close()


def run(listener: Listener, sock: socket.socket) -> None:
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
        asyncio.run(serve(listener, sock))
