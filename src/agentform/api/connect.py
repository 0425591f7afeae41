"""Building the client for a workspace: a URL endpoint, or `local` in-process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx

from agentform.api.client import ApiClient, RetryPolicy
from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.api.endpoint_url import endpoint_password, endpoint_problem, shown_endpoint
from agentform.core.errors import AgentformError
from agentform.core.sensitive import Secrets, Sensitive

LOCAL_BASE_URL = "http://agentform.local/agents/v2"


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


def resolve_api_key(api_key_file: Path | None, local: bool) -> Sensitive | None:
    """From --api-key-file or AGENTFORM_API_KEY; the local service defaults to its demo key."""
    if api_key_file is not None:
        try:
            # utf-8-sig: a leading byte order mark, as editors on Windows write it, is not the key's
            text = api_key_file.read_text(encoding="utf-8-sig").strip()
            return _header_safe(text, "--api-key-file")
        except OSError as exc:
            raise AgentformError(f"cannot read the API key file: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise AgentformError(
                "the API key from --api-key-file is not UTF-8 text (its content is not shown)"
            ) from None
    key = os.environ.get("AGENTFORM_API_KEY")
    if key:
        return _header_safe(key, "AGENTFORM_API_KEY")
    if local:
        from agentform.service import DEMO_ADMIN_KEY

        return Sensitive(DEMO_ADMIN_KEY)
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


def open_client(
    endpoint: Endpoint,
    workspace_root: Path,
    retry: RetryPolicy | None = None,
    concurrency: int = DEFAULT_PARALLELISM,
    rate_limit: float | None = None,
    run_due_work: bool = False,
) -> ApiClient:
    """The run's client: at most `concurrency` requests in flight, `rate_limit` a second.

    On `local`, the in-process service runs its runtime (due executions, batches,
    webhook deliveries) only with `run_due_work`: the provisioner's commands make
    their calls and nothing else; `agentform service run` is what runs due work."""
    if problem := endpoint_problem(endpoint.url):
        raise AgentformError(f"endpoint {problem}")
    if endpoint.api_key is None:
        raise AgentformError("no API key: set AGENTFORM_API_KEY or use --api-key-file")
    transport: httpx.AsyncBaseTransport | None = None
    base_url = endpoint.url
    if endpoint.url == "local":
        from agentform.service import create_app
        from agentform.service.http.inprocess import InProcessTransport
        from agentform.service.store.database import DEFAULT_DB_PATH

        app = create_app(workspace_root / DEFAULT_DB_PATH, runtime=run_due_work)
        transport, base_url = InProcessTransport(app), LOCAL_BASE_URL
    return ApiClient(
        base_url,
        endpoint.api_key,
        transport=transport,
        retry=retry,
        concurrency=concurrency,
        rate_limit=rate_limit,
    )
