"""`agentform test [FILE…]`: run the workspace's behavioural tests (tests/*.yaml).

Every file is read and checked first (all problems at once, nothing run); then
each test runs on a fresh embedded service on a manual clock (agentform.testing).
Exit 0 when every test passes, 1 when one fails or errs. The workspace's
endpoint is never contacted: a test's service is its own. A secret the files
use and the environment does not set stands in as `test-NAME`: the test
service is thrown away, and a pull request's job has no production secrets.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentform.cli.common import guarded, refuse_unused_offline, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.files import refuse_overwriting, save_file
from agentform.cli.views import format_option
from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError

FORMATS = ("text", "junit", "markdown", "json")


def report_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--format and --junit-xml, as every command reporting tests has them (`test`,
    `policy test`)."""
    command = click.option(
        "--junit-xml",
        "junit_xml",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Also write the results as JUnit XML to this file (for CI test reports).",
    )(command)
    return format_option(
        FORMATS,
        "text for a terminal, junit for CI test reports, markdown for a pull request, json.",
    )(command)


def stand_in(name: str) -> str:
    """The value an unset secret has in a test run."""
    return f"test-{name}"


def load_for_tests(run: RunContext) -> Workspace:
    """The workspace as `load` reads it (in the environment --env chooses: its var
    files are what the files render with), unset secrets given their stand-ins."""
    first = run.load(unset_secrets_allowed=True)
    if not first.unset_secrets:
        return first
    environ = dict(os.environ)
    environ.update({name: stand_in(name) for name in first.unset_secrets})
    return run.load(environ=environ)


@click.command("test")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--filter",
    "name_filter",
    help="Run only the tests whose file path or name holds this text.",
)
@report_options
@click.option(
    "--html",
    "html_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write one static page per test into this directory (its steps, executions, "
    "timelines, routing decisions and deliveries; index.html lists them). The reports link them.",
)
@workspace_options
@guarded
def test(
    run: RunContext,
    files: tuple[Path, ...],
    name_filter: str | None,
    fmt: str,
    junit_xml: Path | None,
    html_dir: Path | None,
) -> int:
    """Run the workspace's tests on a fresh embedded service each, on a manual clock.

    Tests are the *.yaml files under tests/ (or the FILEs given; a directory: its
    *.yaml files). Each test applies
    the workspace to its own service, then runs its steps. Exits 1 when a test fails.
    """
    from agentform.testing.files import discover, load_tests, tests_of
    from agentform.testing.pages import Pages
    from agentform.testing.report import Tested, junit, text_line
    from agentform.testing.results import CaseResult
    from agentform.testing.runner import run_tests, selected

    refuse_unused_offline("test", "a test runs on a fresh embedded service of its own")
    if junit_xml is not None:
        refuse_overwriting(junit_xml, "the test report")
    view = run.view(fmt)
    workspace = load_for_tests(run)
    root = workspace.root
    paths = [p for given in files for p in (discover(given, root) if given.is_dir() else [given])]
    paths = paths if files else tests_of(root)
    if not paths:
        where = ", ".join(str(f) for f in files) if files else str(workspace.root / "tests")
        raise AgentformError(
            f"no tests: write them in {where}/*.yaml (agentform init writes an example)"
        )
    runs = load_tests(workspace, paths)
    if not any(selected(r, c, name_filter) for r in runs for c in r.model.tests):
        raise AgentformError(f"no test's file or name holds '{name_filter}'")
    scrub = workspace.secrets.scrub
    say = run.progress(view)

    def shown(case: CaseResult) -> None:
        line = text_line(case, scrub)  # with the report as the output, its first line
        say(line if view.lines_on_stdout else line.splitlines()[0])

    pages = Pages(html_dir, workspace.settings.workspace, scrub) if html_dir else None
    result = run_tests(workspace, runs, name_filter, on_result=shown, pages=pages)
    run.echo(view.show(Tested(result, scrub, workspace.settings.workspace)), nl=False)
    if junit_xml is not None:
        save_file(junit_xml, junit(result, scrub), "the test report")
    return 0 if result.ok else 1
