"""A request that gets no answer says why (issue 20): the name does not resolve,
nothing listens, TLS failed, or no answer came within the timeout; on loopback
sockets (DNS: httpx's own error, raised as its transport raises it, since a
lookup would leave the machine). Each retry and each pause the service asks for
is told to the client's notices."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentform.api.client import ApiClient
from agentform.api.notices import Notices
from agentform.api.retries import RetryPolicy
from agentform.core.errors import ApiError
from agentform.service import create_app
from tests.clock import InstantClock
from tests.loopback import serving


class Heard(Notices):
    def __init__(self) -> None:
        self.heard: list[tuple[str, str, str]] = []

    def retrying(self, call: str, why: str, wait: float) -> None:
        self.heard.append(("retrying", call, why))

    def pausing(self, call: str, why: str, wait: float) -> None:
        self.heard.append(("pausing", call, why))


def failure(url: str, attempts: int = 1, **kw: Any) -> str:
    api = ApiClient(url, "k", retry=RetryPolicy(attempts=attempts), clock=InstantClock(), **kw)

    async def go() -> None:
        async with api:
            await api.request("GET", "/context")

    with pytest.raises(ApiError) as caught:
        asyncio.run(go())
    return str(caught.value)


@contextmanager
def listening() -> Iterator[int]:
    """A loopback port whose connections are taken by the kernel and never answered."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_nothing_listening_is_connection_refused() -> None:
    port = closed_port()
    message = failure(f"http://127.0.0.1:{port}/agents/v2")
    assert f"connection refused: nothing listens at 127.0.0.1:{port}" in message


class NoSuchName(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc


def test_a_name_that_does_not_resolve_is_named_as_dns() -> None:
    message = failure("http://agentform-test.invalid/agents/v2", transport=NoSuchName())
    assert "DNS: the name agentform-test.invalid does not resolve" in message


def test_https_to_a_plain_http_server_is_named_as_tls_and_not_retried(tmp_path: Path) -> None:
    notices = Heard()
    with serving(create_app(tmp_path / "s.db")) as origin:
        url = origin.replace("http://", "https://") + "/agents/v2"
        message = failure(url, attempts=3, notices=notices)
    assert "TLS: the handshake with 127.0.0.1:" in message
    assert notices.heard == []  # the same on every attempt: not sent again


def test_a_service_that_never_answers_is_a_timeout_of_the_seconds_given() -> None:
    with listening() as port:
        notices = Heard()
        message = failure(
            f"http://127.0.0.1:{port}/agents/v2", attempts=2, timeout=0.2, notices=notices
        )
    assert "timeout: no answer within 0.2 s (--timeout or AGENTFORM_TIMEOUT)" in message
    assert notices.heard == [
        (
            "retrying",
            "GET /context",
            "timeout: no answer within 0.2 s (--timeout or AGENTFORM_TIMEOUT)",
        )
    ]


class Throttled(httpx.AsyncBaseTransport):
    """429 with Retry-After: 1, twice; then the context."""

    def __init__(self) -> None:
        self.left = 2

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.left:
            self.left -= 1
            return httpx.Response(429, headers={"Retry-After": "1"}, json={"message": "slow down"})
        return httpx.Response(200, json={"organizations": []})


def test_each_pause_the_service_asks_for_is_told() -> None:
    notices = Heard()
    api = ApiClient(
        "http://svc/agents/v2", "k", transport=Throttled(), clock=InstantClock(), notices=notices
    )
    assert asyncio.run(api.request("GET", "/context")) == {"organizations": []}
    assert notices.heard == [("pausing", "GET /context", "429 slow down")] * 2


@pytest.mark.parametrize("own", [False, True])
def test_the_service_is_named_by_the_endpoint_as_configured(tmp_path: Path, own: bool) -> None:
    """`service prune` and `service advance` call agentform's own operations, served
    at /agentform/v1 beside the API: a message names the service by the endpoint the
    user typed (credentials removed), as the API's calls do, not by that base URL."""
    from agentform.api.connect import Endpoint
    from agentform.cli.endpoint import open_client
    from agentform.core.sensitive import Sensitive

    port = closed_port()
    endpoint = Endpoint(f"http://ops:pw-9@127.0.0.1:{port}/agents/v2", Sensitive("k"))
    api = open_client(endpoint, tmp_path, retry=RetryPolicy(attempts=1), own=own)

    async def go() -> None:
        async with api:
            await api.request("GET", "/clock" if own else "/context")

    with pytest.raises(ApiError) as caught:
        asyncio.run(go())
    assert f"cannot reach the service at http://127.0.0.1:{port}/agents/v2 (" in str(caught.value)
    assert "/agentform/v1" not in str(caught.value) and "pw-9" not in str(caught.value)
