"""Building the client for an endpoint: its key, its checks, the client itself.

An endpoint is `local` or an http(s) URL. This layer does not know what `local`
is served by: the command line builds the in-process transport for it and hands
it to `connect` (cli/endpoint.py); a URL endpoint needs no transport.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx

from agentform.api.client import ApiClient
from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.api.endpoint_url import endpoint_password, endpoint_problem, shown_endpoint
from agentform.api.notices import Notices
from agentform.api.retries import RetryPolicy
from agentform.core.errors import AgentformError
from agentform.core.secrets import API_KEY_VARIABLE, Secrets
from agentform.core.sensitive import Sensitive


@dataclass(frozen=True)
class Endpoint:
    url: str  # "local" or a base URL, as given (it may hold a user and password)
    api_key: Sensitive | None  # marked from where it is read to the request

    @property
    def shown(self) -> str:
        """The endpoint as outputs name it (plans, saved plans): without credentials."""
        return shown_endpoint(self.url)

    def register(self, secrets: Secrets) -> Endpoint:
        """Makes the API key and the URL's password sensitive values of the run."""
        if self.api_key is not None:
            secrets.add_other(self.api_key.reveal())
        for form in endpoint_password(self.url):
            secrets.add_other(form)
        return self


class SharedTransport(httpx.AsyncBaseTransport):
    """A transport several clients of one run use: closing a client leaves it open,
    its owner (the command's run context, a test's session) closes it once, after the last call."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


def resolve_api_key(
    api_key_file: Path | None, variable: str = API_KEY_VARIABLE
) -> Sensitive | None:
    """From --api-key-file or the environment variable (AGENTFORM_API_KEY, or the
    chosen environment's apiKeyEnv); None when neither gives one."""
    if api_key_file is not None:
        try:
            # utf-8-sig: a leading byte order mark, as editors on Windows write it, is not the key's
            text = api_key_file.read_text(encoding="utf-8-sig").strip()
        except OSError as exc:
            raise AgentformError(
                f"cannot read the API key file {api_key_file}: {exc.strerror}"
            ) from None
        except UnicodeDecodeError:
            raise AgentformError(
                "the API key from --api-key-file is not UTF-8 text (its content is not shown)"
            ) from None
        if not text:
            raise AgentformError(f"the API key file {api_key_file} is empty")
        return _header_safe(text, "--api-key-file")
    key = os.environ.get(variable)
    if key:
        return _header_safe(key, variable)
    return None


def _header_safe(key: str, source: str) -> Sensitive:
    """The key, when a header can carry it (printable ASCII); else an error that
    names where it came from, never what it holds."""
    if not key.isascii() or not key.isprintable():
        raise AgentformError(
            f"the API key from {source} is not printable ASCII, so it cannot be sent "
            "(its content is not shown); check that it holds the key alone"
        )
    return Sensitive(key)


def check_endpoint(endpoint: Endpoint) -> Sensitive:
    """The key to call the endpoint with; an error when the endpoint is not one, or
    there is no key."""
    if problem := endpoint_problem(endpoint.url):
        raise AgentformError(f"endpoint {problem}")
    if endpoint.api_key is None:
        raise AgentformError("no API key: set AGENTFORM_API_KEY or use --api-key-file")
    return endpoint.api_key


def connect(
    endpoint: Endpoint,
    transport: httpx.AsyncBaseTransport | None = None,
    base_url: str | None = None,
    retry: RetryPolicy | None = None,
    concurrency: int = DEFAULT_PARALLELISM,
    rate_limit: float | None = None,
    timeout: float | None = None,
    notices: Notices | None = None,
) -> ApiClient:
    """The client of `endpoint`: at most `concurrency` requests in flight, `rate_limit`
    a second, each allowed `timeout` seconds, retries and pauses told to `notices`.
    With `transport`, requests go through it to `base_url` (`local`: the in-process
    service the command line builds), else over HTTP to the endpoint's URL."""
    api_key = check_endpoint(endpoint)
    if transport is None and endpoint.url == "local":
        raise ValueError("endpoint 'local' is served in-process: the caller gives its transport")
    return ApiClient(
        base_url or endpoint.url,
        api_key,
        transport=transport,
        retry=retry,
        concurrency=concurrency,
        rate_limit=rate_limit,
        timeout=timeout,
        notices=notices,
        shown=None if endpoint.url == "local" else endpoint.url,  # the own operations' too
    )
