"""`agentform policy test [DIR]`: the policies' own tests (DIR/tests/*.yaml), offline,
reported in text, JUnit, markdown or JSON as `agentform test` reports; `--coverage`
also fails when a rule lacks a violating or a passing case."""

from __future__ import annotations

from pathlib import Path

import click

from agentform.cli.common import guarded, refuse_unused_offline, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.files import refuse_overwriting, save_file
from agentform.cli.test_cmd import report_options
from agentform.config.files import POLICIES_DIR, TESTS_DIR
from agentform.core.errors import AgentformError
from agentform.policies.loading import load_policies
from agentform.policies.sources import folder_sources, policies_root
from agentform.policies.testing import CaseOutcome, coverage, run_tests
from agentform.testing.report import Tested, junit, text_line
from agentform.testing.results import CaseResult, RunResult


@click.group("policy")
def policy() -> None:
    """The policies (policies/*.yaml) that judge every plan."""


@policy.command("test")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--coverage",
    "with_coverage",
    is_flag=True,
    help="Also fail when a rule lacks a test that violates it or one that it passes.",
)
@report_options
@workspace_options
@guarded
def test(
    run: RunContext, folder: Path | None, with_coverage: bool, fmt: str, junit_xml: Path | None
) -> int:
    """Run the policies' tests: FOLDER (default: the policies/ that judges the
    workspace) holds the policy files, FOLDER/tests/*.yaml their tests. No service
    is needed."""
    refuse_unused_offline("policy test", "a policy test needs no service")
    if junit_xml is not None:
        refuse_overwriting(junit_xml, "the test report")
    view = run.view(fmt)
    folder = folder or policies_root(run.opts.workspace_dir) / POLICIES_DIR
    policies = load_policies(folder_sources(folder, folder.name))
    tests = folder_sources(folder / TESTS_DIR, f"{folder.name}/{TESTS_DIR}")
    if not tests:
        raise AgentformError(f"no policy tests: write them in {folder / TESTS_DIR}/*.yaml")
    outcomes = run_tests(policies, tests)
    result = RunResult([_case(o) for o in outcomes])
    say = run.progress(view)
    for case in result.cases:  # with the report as the output, its first line
        line = text_line(case, _same)
        say(line if view.lines_on_stdout else line.splitlines()[0])
    name = run.opts.workspace_dir.resolve().name
    run.echo(view.show(Tested(result, _same, name, "policy test")), nl=False)
    if junit_xml is not None:
        save_file(junit_xml, junit(result, _same), "the test report")
    lacking = coverage(policies, outcomes) if with_coverage else []
    for line in lacking:
        click.echo(f"coverage: {line}", err=True)
    return 0 if result.ok and not lacking else 1


def _same(text: str) -> str:
    """Policy tests hold no secret's value: nothing to scrub."""
    return text


def _case(outcome: CaseOutcome) -> CaseResult:
    step = "expect" if outcome.outcome == "failed" else "load"
    return CaseResult(
        file=outcome.file,
        name=outcome.name,
        outcome=outcome.outcome,
        where=outcome.where,
        step=step if outcome.outcome != "passed" else "",
        message=outcome.message,
    )
