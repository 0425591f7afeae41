"""One test's service: a fresh embedded Agent Service on a manual clock, in process.

Each test gets its own database, seeded from the test file's seed, in a
temporary directory outside the workspace that is removed when the run ends
(nothing is left behind, no port is opened). The seeded database is built once
per seed and copied for each test: the copy costs a few milliseconds where
migrating and seeding cost tens. The client is the provisioner's own
(`api.connect` over the in-process transport), so the apply a test makes is the
apply `agentform apply` would make; the transport records every call for
`expect: {calls: …}`. Webhook deliveries go to the test's `Receivers`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
from fastapi import FastAPI

from agentform.api.client import ApiClient
from agentform.api.connect import Endpoint, SharedTransport, connect
from agentform.api.endpoint_url import own_url
from agentform.core.errors import AgentformError
from agentform.core.sensitive import Sensitive
from agentform.rules.paths import API_PATH
from agentform.service import create_app
from agentform.service.clock import MANUAL_START, ManualClock
from agentform.service.http.inprocess import InProcessTransport
from agentform.service.startup.seed_file import Seed
from agentform.testing.receivers import Receivers

BASE_URL = f"http://agentform.test{API_PATH}"
"""The base URL of a test's service: never resolved, the transport answers it."""
ENDPOINT_SHOWN = "local (agentform test)"


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # relative to the base URL: /agent-profile-pools/…


class RecordingTransport(InProcessTransport):
    """The in-process transport, keeping the method and path of every request."""

    def __init__(self, app: FastAPI, calls: list[Call]) -> None:
        super().__init__(app)
        self.calls = calls

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith(API_PATH):  # the API's calls, not agentform's own
            self.calls.append(Call(request.method, request.url.path.removeprefix(API_PATH)))
        return await super().handle_async_request(request)


@dataclass
class TestService:
    """A running test service: its clock, receivers, the clients of its API and of
    agentform's own operations (its clock, its routing explanations: reached as
    `agentform service advance` and `webhook explain` reach them), the calls made."""

    __test__ = False  # not a pytest class

    app: FastAPI
    clock: ManualClock
    receivers: Receivers
    api: ApiClient
    own: ApiClient  # shares the api's transport: closing the api closes the service
    calls: list[Call] = field(default_factory=list)


class Databases:
    """Seeded databases for one run, in a temporary directory removed at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._templates: dict[int, Path] = {}
        self._count = 0

    def fresh(self, seed: Seed, start: datetime) -> Path:
        """A new database file holding `seed` (copied from the seed's template)."""
        template = self._templates.get(id(seed))
        if template is None:
            template = self.directory / f"seed-{len(self._templates)}.db"
            app = create_app(template, seed=seed, clock=ManualClock(start), runtime=False)
            app.state.db.close()
            self._templates[id(seed)] = template
        self._count += 1
        path = self.directory / f"test-{self._count}.db"
        shutil.copyfile(template, path)
        return path


@contextmanager
def databases() -> Iterator[Databases]:
    directory = Path(tempfile.mkdtemp(prefix="agentform-test-"))
    try:
        yield Databases(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def admin_key(seed: Seed, organization_id: str | None) -> str:
    """The first admin key of the workspace's organization (by its seed id), or of
    the first organization that has one."""
    orgs = seed.organizations
    if organization_id is not None:
        orgs = [o for o in orgs if o.id is not None and str(o.id) == organization_id] or orgs
    for org in orgs:
        for key in org.apiKeys:
            if key.role == "admin":
                return key.key
    raise AgentformError("the seed has no admin API key: a test needs one to apply the workspace")


def open_service(db_path: Path, seed: Seed, start: datetime | None, key: str) -> TestService:
    """The service over `db_path` (seeded already), its clients made, nothing started:
    the runner starts with the first request, on the caller's event loop."""
    clock = ManualClock(start or MANUAL_START)
    receivers = Receivers()
    app = create_app(db_path, seed=None, clock=clock, webhook_transport=receivers)
    calls: list[Call] = []
    endpoint = Endpoint("local", Sensitive(key))
    transport = RecordingTransport(app, calls)
    api = connect(endpoint, transport=transport, base_url=BASE_URL)
    own = connect(endpoint, transport=SharedTransport(transport), base_url=own_url(BASE_URL))
    return TestService(app, clock, receivers, api, own, calls)
