"""The parts of `agentform test` the golden cases do not reach one by one: the
service's webhook transport hook, the bounds of a hostile test file, the JUnit file,
the markdown cap, and a plan that is not empty."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.cli.context import RunContext
from agentform.cli.main import cli
from agentform.cli.options import Options
from agentform.cli.test_cmd import load_for_tests
from agentform.config.loader import load_workspace
from agentform.service.clock import MANUAL_START
from agentform.service.startup.seed_file import DEMO_ADMIN_KEY, DEMO_SEED
from agentform.testing import report
from agentform.testing.model import MAX_STEPS, MAX_TESTS
from agentform.testing.results import CaseResult, RunResult, StepFailed
from agentform.testing.runner import _expect_plan_empty, apply_workspace
from agentform.testing.session import databases, open_service
from agentform.testing.steps import Context

WORKSPACE = {
    "agentform.yaml": "workspace: units\nendpoint: local\n",
    "objects.yaml": """\
profilePools: [{name: p1, members: [bot-1]}]
webhooks:
  - name: hook
    url: https://hooks.example.com/événements
    attachments: [{agent: support-agent, eventRules: [EXECUTION_STARTED]}]
""",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for name, text in WORKSPACE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "tests").mkdir()
    return tmp_path


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["-C", str(root), "test", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_deliveries_go_through_the_transport_given_at_app_creation(workspace: Path) -> None:
    """create_app(webhook_transport=...): the delivery reaches it, signed, not the network
    (to the receiver of a URL written as httpx does not send it: a non-ASCII path)."""

    async def go() -> list[str]:
        with databases() as dbs:
            service = open_service(
                dbs.fresh(DEMO_SEED, MANUAL_START), DEMO_SEED, None, DEMO_ADMIN_KEY
            )
            async with service.api:
                await apply_workspace(load_workspace(workspace), service)
                agents = await service.api.list_all("/agents", {"searchName": "support-agent"})
                await service.api.request("POST", f"/agents/{agents[0]['id']}/execute", json={})
                await service.clock.advance(5)
            return [r.headers["x-service-signature"][:4] for r in service.receivers.of("hook")]

    assert len(asyncio.run(go())) == 1


def test_a_plan_that_is_not_empty_fails_listing_each_change(workspace: Path) -> None:
    async def go() -> str:
        with databases() as dbs:
            service = open_service(
                dbs.fresh(DEMO_SEED, MANUAL_START), DEMO_SEED, None, DEMO_ADMIN_KEY
            )
            async with service.api:  # the workspace is not applied: everything is to create
                with pytest.raises(StepFailed) as failed:
                    await _expect_plan_empty(Context(service), load_workspace(workspace))
            return str(failed.value)

    assert asyncio.run(go()).splitlines() == [
        "the plan is not empty: 3 changes",
        "  profilePools/p1: create (not in live)",
        "  webhooks/hook: create (not in live)",
        "  webhookAttachments/support-agent/hook: create (not in live)",
    ]


def test_a_hostile_test_file_is_bounded(workspace: Path) -> None:
    (workspace / "tests" / "big.yaml").write_text("tests: []\n" + "#" * (1 << 20))
    steps = "\n".join("      - advance: 1s" for _ in range(MAX_STEPS + 1))
    (workspace / "tests" / "steps.yaml").write_text(f"tests:\n  - name: t\n    steps:\n{steps}\n")
    many = "\n".join(f"  - {{name: t{i}}}" for i in range(MAX_TESTS + 1))
    (workspace / "tests" / "tests.yaml").write_text(f"tests:\n{many}\n")
    code, output = run(workspace)
    assert code == 1
    assert output.splitlines() == [
        "tests/big.yaml: error: the file is 1,048,586 bytes, over the 1 MiB a test file may hold",
        f"tests/steps.yaml:3:5: error: tests.0.steps: at most {MAX_STEPS} steps, not "
        f"{MAX_STEPS + 1}",
        f"tests/tests.yaml:1:1: error: tests: at most {MAX_TESTS} tests, not {MAX_TESTS + 1}",
        "3 problems; nothing was changed.",
    ]


def test_junit_xml_is_written_beside_the_text_and_never_over_a_users_file(
    workspace: Path,
) -> None:
    """The rule every output the user names follows (cli/files.py): it replaces only
    what agentform wrote, its own earlier report included."""
    test_file = workspace / "tests" / "t.yaml"
    test_file.write_text("tests: [{name: applies, steps: []}]\n")
    report = workspace / "out" / "junit.xml"
    for _ in range(2):  # the second run replaces its own report
        code, output = run(workspace, "--junit-xml", str(report))
        assert (code, output.splitlines()[-1]) == (0, "1 passed, 0 failed")
    assert 'tests="1" failures="0" errors="0"' in report.read_text()
    before = test_file.read_text()
    code, output = run(workspace, "--junit-xml", str(test_file))
    assert code == 1
    assert output.endswith(
        f"{test_file} exists and agentform did not write it: the test report does not "
        "replace it (name a new file)\n"
    )
    assert "PASS" not in output  # refused before any test ran, not after they all did
    assert test_file.read_text() == before


def test_markdown_stays_within_the_comment_limit_with_its_fence_closed() -> None:
    long = "\n".join(f"line {i} " + "x" * 80 for i in range(2000))
    result = RunResult(
        [
            CaseResult("t.yaml", f"test {i}", "failed", 0.1, "t.yaml:1:1", "expect plan", long)
            for i in range(5)
        ]
    )
    text = report.markdown(result, lambda s: s, "units")
    assert len(text) <= report.GITHUB_LIMIT
    assert text.count("```") % 2 == 0
    assert text.endswith("run `agentform test` to see every failure.\n")
    assert text.startswith(
        "<!-- agentform:test workspace=units -->\n\n### ❌ agentform test: 0 passed, 5 failed"
    )


def test_a_missing_seed_file_is_one_plain_problem_at_its_line(workspace: Path) -> None:
    """It read `…/tests/nothere.yaml: error: cannot read: …` after its own `error:`,
    with the absolute path."""
    text = "tests:\n  - name: t\n    steps: [{advance: 1s}]\nseed: nothere.yaml\n"
    (workspace / "tests" / "typo.yaml").write_text(text)
    code, output = run(workspace)
    assert code == 1
    assert output.splitlines() == [
        "tests/typo.yaml:4:1: error: seed: no file tests/nothere.yaml in the workspace",
        "1 problem; nothing was changed.",
    ]


def test_the_workspace_is_applied_with_the_parallelism_apply_uses(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its docstring said "as `agentform apply` applies it", with 8 where apply has 16."""
    from agentform.engine.apply import apply_plan as real

    seen: list[int] = []

    async def recording(plan: Any, api: Any, parallelism: int, *rest: Any) -> Any:
        seen.append(parallelism)
        return await real(plan, api, parallelism, *rest)

    monkeypatch.setattr("agentform.testing.runner.apply_plan", recording)
    (workspace / "tests" / "t.yaml").write_text("tests: [{name: applies, steps: []}]\n")
    assert run(workspace)[0] == 0
    assert seen == [Options().parallelism] == [DEFAULT_PARALLELISM]


def test_an_organization_id_given_is_said_to_come_from_the_option(workspace: Path) -> None:
    """`test` loaded the workspace with a copy of the loading that left out where the
    id came from: its errors named agentform.yaml for an id given as --organization-id."""
    given = "11111111-1111-4111-8111-111111111111"
    run_context = RunContext(Options(workspace_dir=workspace, organization_id=given))
    loaded = load_for_tests(run_context)
    assert loaded.settings.organization_id == given
    assert loaded.settings.organization_from == "--organization-id"
