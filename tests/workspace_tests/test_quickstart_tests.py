"""The quickstart's tests/ shows every step type and expectation, and passes."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.testing.model import EXPECT_SUBJECTS, STEP_KEYS

TESTS = Path(__file__).parents[2] / "examples" / "quickstart" / "tests"


def test_the_quickstart_tests_show_every_step_and_expectation() -> None:
    steps = [
        step
        for path in sorted(TESTS.glob("*.yaml"))
        for case in yaml.safe_load(path.read_text())["tests"]
        for step in case["steps"]
    ]
    assert {key for step in steps for key in step} == set(STEP_KEYS)
    expectations = [step["expect"] for step in steps if "expect" in step]
    assert {s for e in expectations for s in EXPECT_SUBJECTS if s in e} == set(EXPECT_SUBJECTS)
    receivers = [step["receiver"] for step in steps if "receiver" in step]
    assert {next(k for k in r if k != "webhook") for r in receivers} == {"fail", "answer"}
    checked = {k for e in expectations for d in e.get("deliveries", []) for k in d}
    assert {"events", "status", "attempts", "body", "headers", "signature"} <= checked


def test_the_quickstart_tests_pass_and_leave_nothing_behind(quickstart: Path) -> None:
    before = sorted(p.relative_to(quickstart).as_posix() for p in quickstart.rglob("*"))
    result = CliRunner().invoke(cli, ["-C", str(quickstart), "test"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.endswith("\n7 passed, 0 failed\n")
    assert sorted(p.relative_to(quickstart).as_posix() for p in quickstart.rglob("*")) == before
