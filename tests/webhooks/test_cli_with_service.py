"""`agentform webhook test` and `webhook listen` against a workspace's local service."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentform.api.connect import Endpoint
from agentform.cli.endpoint import open_client
from agentform.cli.main import cli
from agentform.core.sensitive import Sensitive
from agentform.rules.signatures import verify
from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.startup.seed_file import DEMO_ORGANIZATION_ID
from agentform.service.store.events import append_event
from tests.service.conftest import running
from tests.webhooks.receiver import listen_process, running_receiver


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "agentform.yaml").write_text("workspace: hooks\nendpoint: local\n")
    return tmp_path


def call(workspace: Path, method: str, path: str, body: Any = None) -> Any:
    """One API call to the workspace's local service, as the CLI would make it."""

    async def go() -> Any:
        async with open_client(Endpoint("local", Sensitive(DEMO_ADMIN_KEY)), workspace) as api:
            return await api.request(method, path, json=body)

    return asyncio.run(go())


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_webhook_test_sends_the_test_event_and_shows_it_delivered(workspace: Path) -> None:
    with running_receiver(204) as rx:
        call(workspace, "POST", "/webhook-integrations", {"name": "ops-alerts", "url": rx.url})
        result = run("webhook", "test", "ops-alerts", "-C", str(workspace))
        [got] = rx.received
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"EXECUTION_TEST to ops-alerts ({rx.url}): delivered, answered 204 (1 attempt)\n"
    )
    key = call(workspace, "GET", "/webhook-signing-key")["publicKeyPem"]
    assert verify(got.body, got.headers["X-Service-Signature"], key)
    assert got.json()["info"]["event"] == "EXECUTION_TEST"


def test_webhook_test_reports_a_failing_receiver(workspace: Path) -> None:
    with running_receiver(500) as rx:
        call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": rx.url})
        result = run("webhook", "test", "ops", "-C", str(workspace))
    assert result.exit_code == 1
    assert "not delivered yet (1 attempt: answered 500); the service retries" in result.output
    assert "--wait SECONDS follows the delivery" in result.output


def test_webhook_test_of_an_unknown_name_suggests_one(workspace: Path) -> None:
    call(workspace, "POST", "/webhook-integrations", {"name": "ops-alerts", "url": "http://x/"})
    result = run("webhook", "test", "ops-alert", "-C", str(workspace))
    assert result.exit_code == 1
    assert "no webhook integration named 'ops-alert' (did you mean 'ops-alerts'?)" in result.output


def test_webhook_test_paces_as_every_command_does(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its client takes the run's --parallelism and rate limit (it ignored both and
    ran at the defaults). The real client is made and used: only its arguments are seen."""
    call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": "http://x/"})
    made: list[dict[str, Any]] = []

    def seen(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs)
        return open_client(*args, **kwargs)

    monkeypatch.setattr("agentform.cli.endpoint.open_client", seen)
    args = ["webhook", "test", "ops", "-C", str(workspace), "--parallelism", "3"]
    result = CliRunner().invoke(cli, args, env={"AGENTFORM_RATE_LIMIT": "120/min"})
    assert "EXECUTION_TEST to ops" in result.output, result.output
    assert made and all(m["concurrency"] == 3 and m["rate_limit"] == 2.0 for m in made), made


@pytest.fixture
def listener(workspace: Path) -> Iterator[tuple[Any, str]]:
    with listen_process("-C", str(workspace), env={"AGENTFORM_API_KEY": DEMO_ADMIN_KEY}) as process:
        assert "verifying with signing key sha256:" in process.first_line
        assert process.stdout.readline().startswith("(endpoint local: notifications come from")
        yield process, process.url


def test_listen_receives_the_services_deliveries_verified(
    workspace: Path, listener: tuple[Any, str]
) -> None:
    process, url = listener
    assert process.stdout is not None
    app = create_app(workspace / ".agentform" / "service.db")  # the same database, another process
    with running(app, DEMO_ADMIN_KEY) as (api, _):
        agent = api.ids("/agents")["checkout-agent"]
        hook = api.post("/webhook-integrations", json={"name": "listen", "url": url}).json()
        api.request("PUT", f"/agents/{agent}/webhooks/{hook['id']}", json={"eventRules": ["*"]})
        with app.state.db.write() as conn:
            append_event(
                conn,
                organization_id=DEMO_ORGANIZATION_ID,
                agent_id=agent,
                event="EXECUTION_STARTED",
                payload={},
                execution_id="e-1",
            )
        line = process.stdout.readline()  # the wall clock's runner delivers it
        # The line is printed before the answer goes back: the attempt is recorded after.
        for _ in range(100):
            path = f"/webhook-integrations/{hook['id']}/deliveries"
            deliveries = api.get(path).json()["items"]
            if deliveries and deliveries[0]["status"] != "pending":
                break
            time.sleep(0.05)
    app.state.db.close()
    assert "EXECUTION_STARTED" in line and "execution e-1" in line
    assert "agent checkout-agent" in line and line.rstrip().endswith("verified")
    assert [(d["status"], d["lastResponseStatus"]) for d in deliveries] == [("delivered", 204)]


def test_outside_a_workspace_the_commands_say_how_to_name_the_service(tmp_path: Path) -> None:
    for args in (["test", "x"], ["listen", "--port", "0"]):
        result = run("webhook", *args, "-C", str(tmp_path))
        assert result.exit_code == 1
        assert "give the service with --endpoint URL (or 'local')" in result.output


def test_webhook_test_wait_returns_as_soon_as_the_delivery_is_settled(workspace: Path) -> None:
    """--wait is the most it waits: a delivered test returns at once (the retries it
    follows are tested on a manual clock in test_webhook_test_wait.py)."""
    with running_receiver(204) as rx:
        call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": rx.url})
        began = time.monotonic()
        result = run("webhook", "test", "ops", "--wait", "60", "-C", str(workspace))
        took = time.monotonic() - began
    assert result.exit_code == 0, result.output
    assert (
        result.output == f"EXECUTION_TEST to ops ({rx.url}): delivered, answered 204 (1 attempt)\n"
    )
    assert took < 30


def test_the_commands_need_no_secret_of_the_workspace(workspace: Path) -> None:
    """They manage nothing: a secret() whose variable is not set (a webhook's header)
    does not stop them; its value is never needed."""
    (workspace / "hooks.yaml").write_text(
        "webhooks:\n  - name: ops\n    url: http://127.0.0.1:9/\n"
        "    headers: {X-Token: \"{{ secret('UNSET_HOOK_TOKEN') }}\"}\n"
    )
    with running_receiver(204) as rx:
        call(workspace, "POST", "/webhook-integrations", {"name": "ops-alerts", "url": rx.url})
        result = run("webhook", "test", "ops-alerts", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert "delivered, answered 204" in result.output
