"""The sender checks the address it connects to, not only the URL as saved
(docs/guide/security.md#what-the-service-checks-when-it-connects): a host name is resolved
once, each address is checked (rules/webhook_targets.py), and the connection goes
to that address with the Host header and the TLS server name unchanged.

Resolution is injected (`Resolver`): no test asks a real DNS server. Before this
check, `resolved_problem` existed but the sender never called it, so a name that
resolved to 169.254.169.254 at send time (DNS rebinding) was delivered to.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore

from agentform.service.delivery import connecting, sender
from tests.webhooks.receiver import running_receiver


class FlippingResolver:
    """Answers each name from a list of answers in turn (the last one repeats),
    recording every question."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _attempt(url: str, resolver: Any, backend: Any = None, allow: bool = False) -> sender.Attempt:
    async def go() -> sender.Attempt:
        transport = connecting.checked_transport(resolver, allow, backend=backend)
        async with sender.new_http_client(transport=transport) as client:
            return await sender.post(client, url, b"{}", {"X-Token": "t"})

    return asyncio.run(go())


def test_a_name_rebound_to_a_metadata_address_is_refused_when_connecting() -> None:
    resolver = FlippingResolver(["127.0.0.1"], ["169.254.169.254"])
    with running_receiver() as rx:
        port = rx.server.server_address[1]
        url = f"http://hooks.test:{port}/hook"
        first = _attempt(url, resolver)
        second = _attempt(url, resolver)  # a new connection: resolved again
        assert first == sender.Attempt(True, 204)
        assert len(rx.received) == 1  # the second never reached anyone
        assert rx.received[0].headers["Host"] == f"hooks.test:{port}"
    assert not second.ok and second.status is None
    assert second.error is not None and "169.254.169.254" in second.error
    assert "link-local or cloud-metadata" in second.error
    assert resolver.asked == [("hooks.test", port), ("hooks.test", port)]


def test_one_refused_address_among_those_a_name_resolves_to_refuses_it() -> None:
    resolver = FlippingResolver(["127.0.0.1", "64:ff9b::a9fe:a9fe"])
    with running_receiver() as rx:
        port = rx.server.server_address[1]
        result = _attempt(f"http://both.test:{port}/hook", resolver)
        assert rx.received == []
    assert result.error is not None and "carries 169.254.169.254" in result.error


def test_a_name_that_resolves_to_nothing_is_a_failed_attempt_saying_so() -> None:
    result = _attempt("http://nowhere.test/hook", FlippingResolver([]))
    assert result.error == "could not deliver: nowhere.test resolves to no address"


def test_an_address_written_in_the_url_is_not_resolved() -> None:
    resolver = FlippingResolver(["169.254.169.254"])
    with running_receiver() as rx:
        assert _attempt(rx.url, resolver).ok
    assert resolver.asked == []


def test_a_service_that_allows_private_webhooks_does_not_refuse_them() -> None:
    resolver = FlippingResolver(["127.0.0.1", "169.254.169.254"])
    with running_receiver() as rx:
        port = rx.server.server_address[1]
        url = f"http://metadata.test:{port}/hook"
        assert not _attempt(url, resolver).ok
        assert _attempt(url, resolver, allow=True).ok


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """The real network, recording where it connects and the TLS server name asked."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.connected: list[str] = []
        self.server_names: list[str | None] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connected.append(host)
        stream = await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        backend = self

        class Recorded(httpcore.AsyncNetworkStream):
            async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
                return await stream.read(max_bytes, timeout)

            async def write(self, buffer: bytes, timeout: float | None = None) -> None:
                await stream.write(buffer, timeout)

            async def aclose(self) -> None:
                await stream.aclose()

            async def start_tls(
                self,
                ssl_context: Any,
                server_hostname: str | None = None,
                timeout: float | None = None,
            ) -> httpcore.AsyncNetworkStream:
                backend.server_names.append(server_hostname)
                return await stream.start_tls(ssl_context, server_hostname, timeout)

        return Recorded()

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def test_tls_is_asked_for_the_name_while_the_connection_goes_to_the_checked_address() -> None:
    backend = RecordingBackend()
    with running_receiver() as rx:  # speaks plain HTTP: the handshake fails, after the ask
        port = rx.server.server_address[1]
        result = _attempt(f"https://tls.test:{port}/hook", FlippingResolver(["127.0.0.1"]), backend)
    assert not result.ok
    assert backend.connected == ["127.0.0.1"]
    assert backend.server_names == ["tls.test"]


def test_a_url_the_sender_cannot_read_fails_the_attempt_for_good_with_its_reason() -> None:
    """Before: httpx.InvalidURL escaped the sender; the delivery stayed pending forever."""
    result = _attempt("http://xn--zz.example/hook", FlippingResolver(["127.0.0.1"]))
    assert not result.ok and result.final
    assert result.error is not None and result.error.startswith("cannot be sent to this URL")
