"""The workspace's client, for the commands: an endpoint URL, or `local`.

`endpoint: local` is the embedded Agent Service run in this process. The API
layer knows only that a client may be handed a transport; this module is what
builds that transport, the service's app on the workspace's database, and the
demo key the local service accepts when no key is given. The service is loaded
only when a command talks to `local`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from agentform.api.client import ApiClient
from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.api.connect import (
    Endpoint,
    SharedTransport,
    check_endpoint,
    connect,
    resolve_api_key,
)
from agentform.api.endpoint_url import own_url
from agentform.api.notices import Notices
from agentform.api.retries import RetryPolicy
from agentform.core.errors import AgentformError
from agentform.core.secrets import API_KEY_VARIABLE
from agentform.core.sensitive import Sensitive
from agentform.rules.paths import API_PATH

if TYPE_CHECKING:
    from agentform.service.http.inprocess import InProcessTransport

LOCAL = "local"
LOCAL_BASE_URL = f"http://agentform.local{API_PATH}"
"""The base URL of the in-process service: never resolved, the transport answers it."""


def api_key_for(
    url: str,
    api_key_file: Path | None,
    variable: str = API_KEY_VARIABLE,
    environment: str | None = None,
) -> Sensitive | None:
    """The key from --api-key-file or `variable` (AGENTFORM_API_KEY, or the chosen
    environment's apiKeyEnv: no other variable is read for it); the local service
    defaults to its demo key."""
    key = resolve_api_key(api_key_file, variable)
    if key is None and url != LOCAL and variable != API_KEY_VARIABLE:
        raise AgentformError(
            f"no API key for environment {environment}: set {variable} (its apiKeyEnv "
            "in agentform.yaml) or use --api-key-file"
        )
    if key is None and url == LOCAL:
        from agentform.service import DEMO_ADMIN_KEY

        return Sensitive(DEMO_ADMIN_KEY)
    return key


def local_state(workspace_root: Path, environment: str | None = None) -> Path:
    """The embedded service's database of a workspace on `endpoint: local`:
    `.agentform/service.db`, or `.agentform/<environment>/service.db` for one of its
    environments, so two environments never share one state (nor its one demo
    organization). An environment's name is one path segment or refused."""
    import re

    from agentform.config.environments import NAME_PATTERN
    from agentform.service.store.database import DEFAULT_DB_PATH

    if environment is None:
        return workspace_root / DEFAULT_DB_PATH
    if not re.fullmatch(NAME_PATTERN, environment):  # never `..`, `/` or a hidden name
        raise AgentformError(f"{environment!r} is not an environment's name")
    return workspace_root / DEFAULT_DB_PATH.parent / environment / DEFAULT_DB_PATH.name


def local_service(db: Path, run_due_work: bool = False) -> InProcessTransport:
    """The in-process service on the state file `db` (`local_state`). It runs its
    runtime (due executions, batches, webhook deliveries) only with `run_due_work`:
    the provisioner's commands make their calls and nothing else; `agentform service
    run` is what runs due work."""
    from agentform.service import create_app
    from agentform.service.http.inprocess import InProcessTransport

    return InProcessTransport(create_app(db, runtime=run_due_work))


def open_client(
    endpoint: Endpoint,
    workspace_root: Path,
    retry: RetryPolicy | None = None,
    concurrency: int = DEFAULT_PARALLELISM,
    rate_limit: float | None = None,
    run_due_work: bool = False,
    timeout: float | None = None,
    notices: Notices | None = None,
    own: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ApiClient:
    """The run's client: at most `concurrency` requests in flight, `rate_limit` a second;
    with `own`, of agentform's own operations of that service instead of its API.
    On `local`: `transport` (shared: its owner closes it), else a service of
    its own (`local_service`) which closing the client closes."""
    # Checked before the local service is built: building it creates its database.
    check_endpoint(endpoint)
    base_url = own_url(endpoint.url) if own else None
    if endpoint.url == LOCAL:
        if transport is None:
            transport = local_service(local_state(workspace_root), run_due_work)
        else:
            transport = SharedTransport(transport)
        base_url = own_url(LOCAL_BASE_URL) if own else LOCAL_BASE_URL
    return connect(
        endpoint,
        transport=transport,
        base_url=base_url,
        retry=retry,
        concurrency=concurrency,
        rate_limit=rate_limit,
        timeout=timeout,
        notices=notices,
    )
