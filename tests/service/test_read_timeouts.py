"""The read timeouts of `agentform service run` (service/http/timeouts.py), over a real
socket on loopback with a short configured timeout: a request whose headers or body
stall is answered 408 and its connection closed, and nothing is stored."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from agentform.service import create_app
from agentform.service.http.timeouts import TimedConfig
from agentform.service.settings import ServiceSettings
from tests.service.conftest import ADMIN_KEY, TEST_SEED

TIMEOUT = 0.3


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    db = Path(tmp_path_factory.mktemp("timeouts")) / "service.db"
    app = create_app(db, seed=TEST_SEED, settings=ServiceSettings(read_timeout_seconds=TIMEOUT))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = TimedConfig(app, read_timeout=TIMEOUT, log_level="error", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    started = threading.Event()
    while not server.started and thread.is_alive():
        started.wait(0.01)
    try:
        yield sock.getsockname()
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        app.state.db.close()


def _answer(address: tuple[str, int], sent: bytes) -> bytes:
    """What the server answers to `sent` before it closes the connection: within 3 s,
    before uvicorn's own 5 s keep-alive timeout would close it."""
    with socket.create_connection(address, timeout=3) as conn:
        conn.sendall(sent)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def _pools(address: tuple[str, int]) -> int:
    url = f"http://{address[0]}:{address[1]}/agents/v2/agent-profile-pools"
    total: int = httpx.get(url, headers={"X-Api-Key": ADMIN_KEY}).json()["total"]
    return total


def test_headers_that_never_end_are_a_408_and_the_connection_closes(
    origin: tuple[str, int],
) -> None:
    answer = _answer(origin, b"GET /agents/v2/context HTTP/1.1\r\nHost: x\r\nX-Api-")
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert answer.endswith(b"the request's headers did not arrive in time\"}")
    assert b'{"code": 408, ' in answer


def test_a_connection_that_sends_nothing_is_closed(origin: tuple[str, int]) -> None:
    assert _answer(origin, b"").startswith(b"HTTP/1.1 408 ")


def test_a_body_shorter_than_its_content_length_is_a_408_and_nothing_is_stored(
    origin: tuple[str, int],
) -> None:
    before = _pools(origin)
    body = b'{"name": "never-stored"}'
    head = (
        "POST /agents/v2/agent-profile-pools HTTP/1.1\r\nHost: x\r\n"
        f"X-Api-Key: {ADMIN_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) + 10}\r\n\r\n"
    )
    answer = _answer(origin, head.encode() + body)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b'"code":408' in answer and b"Content-Length" in answer
    assert _pools(origin) == before


def test_a_request_in_time_is_served_on_the_same_server(origin: tuple[str, int]) -> None:
    answer = _answer(
        origin,
        f"GET /agents/v2/context HTTP/1.1\r\nHost: x\r\nX-Api-Key: {ADMIN_KEY}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert answer.startswith(b"HTTP/1.1 200 ")
