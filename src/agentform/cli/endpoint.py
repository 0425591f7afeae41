"""The workspace's client, for the commands: an endpoint URL, or `local`.

`endpoint: local` is the embedded Agent Service run in this process. The API
layer knows only that a client may be handed a transport; this module is what
builds that transport, the service's app on the workspace's database, and the
demo key the local service accepts when no key is given. The service is loaded
only when a command talks to `local`.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from agentform.api.client import ApiClient
from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.api.connect import Endpoint, check_endpoint, connect, resolve_api_key
from agentform.api.notices import Notices
from agentform.api.retries import RetryPolicy
from agentform.core.errors import AgentformError
from agentform.core.secrets import API_KEY_VARIABLE
from agentform.core.sensitive import Sensitive

LOCAL = "local"
LOCAL_BASE_URL = "http://agentform.local/agents/v2"
API_PATH = "/agents/v2"
OWN_PATH = "/agentform/v1"


def own_url(base_url: str) -> str:
    """The URL of agentform's own operations (docs/service/own-operations.md) on the
    server of the API's `base_url`: `<root>/agentform/v1` beside `<root>/agents/v2`."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith(API_PATH):
        path = path[: -len(API_PATH)]
    return urlunsplit((parts.scheme, parts.netloc, path + OWN_PATH, "", ""))


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
) -> ApiClient:
    """The run's client: at most `concurrency` requests in flight, `rate_limit` a second;
    with `own`, of agentform's own operations of that service instead of its API.

    On `local`, the in-process service runs its runtime (due executions, batches,
    webhook deliveries) only with `run_due_work`: the provisioner's commands make
    their calls and nothing else; `agentform service run` is what runs due work."""
    # Checked before the local service is built: building it creates its database.
    check_endpoint(endpoint)
    if endpoint.url != LOCAL:
        return connect(
            endpoint,
            base_url=own_url(endpoint.url) if own else None,
            retry=retry,
            concurrency=concurrency,
            rate_limit=rate_limit,
            timeout=timeout,
            notices=notices,
        )
    from agentform.service import create_app
    from agentform.service.http.inprocess import InProcessTransport
    from agentform.service.store.database import DEFAULT_DB_PATH

    app = create_app(workspace_root / DEFAULT_DB_PATH, runtime=run_due_work)
    return connect(
        endpoint,
        transport=InProcessTransport(app),
        base_url=own_url(LOCAL_BASE_URL) if own else LOCAL_BASE_URL,
        retry=retry,
        concurrency=concurrency,
        rate_limit=rate_limit,
        timeout=timeout,
        notices=notices,
    )
