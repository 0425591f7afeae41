"""`endpoint: local`: the read-only commands (plan, drift, show, export) open the
in-process service with its runtime off, so they run no due work and send nothing;
the state file is private (0600) because it holds webhook header values."""

from __future__ import annotations

import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentform.cli.main import cli
from agentform.service import DEMO_ADMIN_KEY, create_app
from agentform.service.runtime import ManualClock
from tests.loopback import serving
from tests.provisioner.harness import write_workspace

KEY = {"X-Api-Key": DEMO_ADMIN_KEY}
TABLES = ("jobs", "executions", "webhook_deliveries", "execution_batches", "execution_batch_items")


@pytest.fixture
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A webhook receiver on loopback: its URL and the bodies it got."""
    received: list[bytes] = []
    lock = threading.Lock()

    async def hook(request: Request) -> Response:
        body = await request.body()
        with lock:
            received.append(body)
        return Response(status_code=202)

    with serving(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as origin:
        yield f"{origin}/hook", received


def _state(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        return {t: list(conn.execute(f"SELECT * FROM {t} ORDER BY rowid")) for t in TABLES}
    finally:
        conn.close()


def _local_workspace_with_due_work(root: Path, hook_url: str) -> Path:
    """A local workspace whose state holds a batch due (its startAt, on the wall
    clock, has passed) and a pending webhook delivery: work nobody has run yet."""
    ws = write_workspace(root, {"agentform.yaml": "workspace: local\nendpoint: local\n"})
    app = create_app(ws / ".agentform" / "service.db", clock=ManualClock())  # 2025-01-01
    api = TestClient(app)  # no lifespan: nothing runs while the state is made
    agent = next(
        a["id"]
        for a in api.get("/agents/v2/agents", headers=KEY).json()["items"]
        if a["name"] == "support-agent"
    )
    hook = api.post(
        "/agents/v2/webhook-integrations", json={"name": "h", "url": hook_url}, headers=KEY
    ).json()["id"]
    attached = api.put(
        f"/agents/v2/agents/{agent}/webhooks/{hook}", json={"eventRules": ["*"]}, headers=KEY
    )
    assert attached.status_code < 300, attached.text
    made = api.post(
        "/agents/v2/execution-batches",
        json={
            "agentId": agent,
            "name": "due",
            "startAt": "2025-06-01T00:00:00Z",  # future then, past now
            "config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 60},
            "items": [{"inputs": {"a": "b"}}],
        },
        headers=KEY,
    )
    assert made.status_code == 201, made.text
    tested = api.post(f"/agents/v2/webhook-integrations/{hook}/test", headers=KEY).json()
    assert tested["status"] == "pending"
    app.state.db.close()
    return ws


@pytest.mark.parametrize("command", [["plan"], ["drift"], ["export", "--out", "x"]])
def test_read_only_commands_on_a_local_endpoint_run_no_due_work(
    tmp_path: Path, listener: tuple[str, list[bytes]], command: list[str]
) -> None:
    url, received = listener
    ws = _local_workspace_with_due_work(tmp_path / "ws", url)
    db = ws / ".agentform" / "service.db"
    before = _state(db)
    assert any(row for row in before["jobs"])  # due work is waiting
    out = tmp_path / "exported"
    args = [a if a != "x" else str(out) for a in command]
    result = CliRunner().invoke(cli, [*args, "-C", str(ws)])
    assert result.exit_code in (0, 2), result.output
    assert _state(db) == before
    assert received == []


def test_the_local_state_file_is_private(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws", {"agentform.yaml": "workspace: p\nendpoint: local\n"})
    result = CliRunner().invoke(cli, ["plan", "-C", str(ws)])
    assert result.exit_code == 0, result.output
    files = sorted((ws / ".agentform").glob("service.db*"))
    assert files[0].name == "service.db"
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_apply_on_a_local_endpoint_makes_its_calls_and_runs_no_due_work(
    tmp_path: Path, listener: tuple[str, list[bytes]]
) -> None:
    url, received = listener
    ws = _local_workspace_with_due_work(tmp_path / "ws", url)
    (ws / "pools.yaml").write_text("profilePools:\n  - {name: new-pool}\n")
    db = ws / ".agentform" / "service.db"
    before = _state(db)
    result = CliRunner().invoke(
        cli, ["apply", "--auto-approve", "--target", "profilePools/new-pool", "-C", str(ws)]
    )
    assert result.exit_code == 0, result.output
    assert "create profilePools/new-pool: done" in result.output
    assert _state(db) == before
    assert received == []


def test_the_api_layer_serves_local_only_through_a_transport_it_is_given(tmp_path: Path) -> None:
    """api/ knows no service: `connect` to `local` without the CLI's in-process
    transport is refused; with a transport, requests go to the base URL given."""
    from agentform.api.connect import Endpoint, connect
    from agentform.cli.endpoint import LOCAL_BASE_URL, open_client
    from agentform.core.sensitive import Sensitive

    endpoint = Endpoint("local", Sensitive(DEMO_ADMIN_KEY))
    with pytest.raises(ValueError, match="in-process"):
        connect(endpoint)
    client = open_client(endpoint, tmp_path)
    assert client.sender.base_url == LOCAL_BASE_URL
    assert (tmp_path / ".agentform" / "service.db").exists()


def test_a_local_endpoint_without_a_key_is_refused_before_its_database_is_made(
    tmp_path: Path,
) -> None:
    from agentform.api.connect import Endpoint
    from agentform.cli.endpoint import open_client
    from agentform.core.errors import AgentformError

    with pytest.raises(AgentformError, match="no API key"):
        open_client(Endpoint("local", None), tmp_path)
    assert not (tmp_path / ".agentform").exists()


def test_the_local_service_gives_its_demo_key_when_none_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentform.cli.endpoint import api_key_for

    monkeypatch.delenv("AGENTFORM_API_KEY", raising=False)
    local = api_key_for("local", None)
    assert local is not None and local.reveal() == DEMO_ADMIN_KEY
    assert api_key_for("http://127.0.0.1:9/agents/v2", None) is None
    monkeypatch.setenv("AGENTFORM_API_KEY", "own-key")
    own = api_key_for("local", None)
    assert own is not None and own.reveal() == "own-key"
