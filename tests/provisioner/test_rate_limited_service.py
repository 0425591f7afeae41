"""Plan and apply against a rate-limited service: `agentform service run --rate-limit 3`,
a real process on 127.0.0.1. The run is slower and nothing fails; a write is sent
again only after a 429 (refused unprocessed), never blindly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from agentform.api.client import ApiClient
from agentform.api.transport import ConnectionShards
from agentform.cli.main import cli
from agentform.config.loader import load_workspace
from agentform.core.sensitive import Sensitive
from agentform.engine.apply import apply_plan
from agentform.engine.planner import make_plan
from agentform.service import DEMO_ADMIN_KEY
from tests.provisioner.harness import write_workspace
from tests.service.test_server import running

POOLS = 12


class Recording(httpx.AsyncBaseTransport):
    """Every attempt as the service answered it: (method, path, body, status)."""

    def __init__(self) -> None:
        self.inner = ConnectionShards(16)
        self.attempts: list[tuple[str, str, bytes, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.attempts.append(
            (request.method, request.url.path, request.content, response.status_code)
        )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("limited") / "svc.db"
    with running("--db", str(db), "--rate-limit", "3") as (base, _):
        yield base


@pytest.mark.slow
def test_plan_and_apply_succeed_slower_with_no_blind_retry(limited: str, tmp_path: Path) -> None:
    pools = "".join(f"  - {{name: limited-{i:02d}}}\n" for i in range(POOLS))
    root = write_workspace(
        tmp_path / "ws",
        {
            "agentform.yaml": "workspace: limited\n",
            "pools.yaml": f"profilePools:\n{pools}"
            "profileGroups:\n  - {name: limited-group, members: [bot-1, bot-2]}\n",
        },
    )
    workspace = load_workspace(root)
    recording = Recording()

    async def run() -> list[str]:
        async with ApiClient(limited, Sensitive(DEMO_ADMIN_KEY), transport=recording) as api:
            plan = await make_plan(workspace, api, limited)
            assert plan.summary.create == POOLS + 1
            report = await apply_plan(plan, api, parallelism=16)
            assert report.ok, [r.error for r in report.results if r.error]
            again = await make_plan(workspace, api, limited)
            assert not again.has_changes
            assert api.limiter.pauses >= 1  # the service did push back
            return [p["name"] for p in await api.list_all("/agent-profile-pools")]

    names = asyncio.run(run())
    assert sorted(names) == [f"limited-{i:02d}" for i in range(POOLS)]  # each made once
    statuses = {status for *_, status in recording.attempts}
    assert statuses <= {200, 201, 204, 429}, statuses  # no failure of any other kind
    assert 429 in statuses
    seen: dict[tuple[str, str, bytes], int] = {}
    for method, path, body, status in recording.attempts:
        if method != "GET":
            previous = seen.get((method, path, body))
            assert previous in (None, 429), f"{method} {path} sent again after {previous}"
            seen[(method, path, body)] = status


def test_the_cli_plans_against_it_with_a_known_rate(limited: str, tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        {"agentform.yaml": "workspace: limited\n", "pools.yaml": "profilePools: []\n"},
    )
    env = {"AGENTFORM_API_KEY": DEMO_ADMIN_KEY, "AGENTFORM_RATE_LIMIT": "2/s"}
    result = CliRunner().invoke(
        cli, ["plan", "-C", str(root), "--endpoint", limited, "--detailed-exitcode"], env=env
    )
    assert result.exit_code == 0, result.output
    assert "No changes." in result.output


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--rate-limit", "fast"], {}, "Invalid value for '--rate-limit': rate limit 'fast'"),
        ([], {"AGENTFORM_RATE_LIMIT": "0/s"}, "rate limit '0/s'"),
        (["--parallelism", "0"], {}, "Invalid value for '--parallelism'"),
    ],
)
def test_bad_pacing_options_are_usage_errors(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    root = write_workspace(tmp_path / "ws", {"agentform.yaml": "workspace: w\n"})
    result = CliRunner().invoke(cli, ["plan", "-C", str(root), *args], env=env)
    assert result.exit_code == 1 and message in result.output, result.output  # usage: 1
