"""One delivery attempt: a signed POST of the exact bytes, judged by its status.

2xx is success; any other status (a redirect included: redirects are not
followed), a connection error, or no answer before the deadline is a failed
attempt. A response body is read (so the connection is reused) and thrown
away; one larger than 64 KiB is not read to its end, and its connection is
dropped. What is recorded of a failure (`error`) names what happened, never
a header value. A host the sender may not connect to (`connecting`) is a failed
attempt saying why; a URL it cannot read at all (stored before the URL rule
refused it) fails the delivery at once (`final`), with its reason.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import httpx

from agentform.rules.signatures import SIGNATURE_HEADER
from agentform.service.delivery.connecting import Unreachable, checked_transport
from agentform.service.settings import WEBHOOK_TIMEOUT_SECONDS

USER_AGENT = "AgentService-Webhooks/2"
MAX_BODY_READ = 64 * 1024


HEAD_BYTES = 256  # of an answer, kept with the attempt for `webhook deliveries`


@dataclass(frozen=True)
class Attempt:
    ok: bool
    status: int | None = None
    error: str | None = None
    head: str = ""  # the answer's first bytes, as text
    seconds: float = 0.0  # how long it took, on the runtime's clock
    final: bool = False  # no later attempt can do better: the delivery fails now


LIMITS = httpx.Limits(max_connections=64, max_keepalive_connections=8)
"""Few idle connections: httpx checks each of them on every request."""


def new_http_client(
    timeout: float = WEBHOOK_TIMEOUT_SECONDS, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The runner's client: no redirects, no environment proxies, bounded time, each
    connection's address checked (`connecting.checked_transport`, which the runner
    hands in with the service's settings). Another `transport` (create_app's
    `webhook_transport`) replaces the network: `agentform test` hands in its
    in-process receivers."""
    return httpx.AsyncClient(
        transport=transport or checked_transport(limits=LIMITS),
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(timeout),
    )


def request_headers(custom: Mapping[str, str], signature: str) -> dict[str, str]:
    """Custom headers first, then the ones the service owns (never overridable)."""
    return {
        "User-Agent": USER_AGENT,
        **custom,
        "Content-Type": "application/json",
        SIGNATURE_HEADER: signature,
    }


async def post(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    deadline: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    timeout: float = WEBHOOK_TIMEOUT_SECONDS,
    seconds: Callable[[], float] | None = None,
) -> Attempt:
    """POST `body` to `url`; `deadline`, when given, bounds the whole attempt (the
    runner passes its clock's `deadline(timeout)`, so a manual clock decides when);
    `seconds` (the clock's) times the attempt."""
    started = seconds() if seconds else 0.0
    try:
        if deadline is None:
            attempt = await _send(client, url, body, headers)
        else:
            async with deadline():
                attempt = await _send(client, url, body, headers)
    except TimeoutError:  # the deadline's (httpx's own timeouts are httpx errors)
        attempt = Attempt(False, None, f"no answer within {timeout:g} s")
    except httpx.TimeoutException:
        attempt = Attempt(False, None, f"no answer within {client.timeout.read or 0:g} s")
    except httpx.ConnectError as exc:
        reason = exc.__cause__ if isinstance(exc.__cause__, Unreachable) else None
        attempt = Attempt(False, None, f"could not deliver: {reason}" if reason else _plain(exc))
    except httpx.HTTPError as exc:
        attempt = Attempt(False, None, _plain(exc))
    except (httpx.InvalidURL, UnicodeError) as exc:  # idna's errors are UnicodeErrors
        attempt = Attempt(False, None, f"cannot be sent to this URL ({exc})", final=True)
    took = seconds() - started if seconds else 0.0
    return dataclasses.replace(attempt, seconds=max(0.0, took))


def _plain(exc: httpx.HTTPError) -> str:
    """A failure by its kind alone: httpx's messages may quote the request."""
    return f"could not deliver ({type(exc).__name__})"


@functools.lru_cache(maxsize=1024)
def parsed(url: str) -> httpx.URL | str:
    """A receiver's URL parsed once, not at every attempt (httpx parses a string URL
    again each time: half the cost of building a request). One httpx cannot parse
    stays a string, to fail when it is sent, as before."""
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError):
        return url


def _raw(response: httpx.Response) -> AsyncIterator[bytes]:
    """The answer's bytes as they come, undecoded (a compressed body is not inflated
    past MAX_BODY_READ). A transport may answer with a body it read already (a
    Response built with `content=`, as MockTransport handlers build them): httpx
    cannot stream that again, so it is its content, whole."""
    if response.is_stream_consumed:
        return _whole(response.content)
    return response.aiter_raw()


async def _whole(content: bytes) -> AsyncIterator[bytes]:
    yield content


async def _send(
    client: httpx.AsyncClient, url: str, body: bytes, headers: Mapping[str, str]
) -> Attempt:
    async with client.stream("POST", parsed(url), content=body, headers=dict(headers)) as response:
        status = response.status_code
        read, head = 0, b""
        async for chunk in _raw(response):  # to its end: the connection is reused
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            read += len(chunk)
            if read > MAX_BODY_READ:
                break
    text = head.decode("utf-8", errors="replace")
    if 200 <= status < 300:
        return Attempt(True, status, head=text)
    if 300 <= status < 400:
        return Attempt(False, status, f"answered {status}; redirects are not followed", text)
    return Attempt(False, status, f"answered {status}", text)
