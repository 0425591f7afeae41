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
from pathlib import Path

import click

from agentform.cli.common import (
    Options,
    guarded,
    refuse_unchosen_environment,
    refuse_unused_offline,
    workspace_options,
)
from agentform.cli.conventions import SuggestingChoice
from agentform.cli.safety import run_secrets
from agentform.config.files import TESTS_DIR
from agentform.config.loader import Workspace, load_workspace
from agentform.core.errors import AgentformError

FORMATS = ("text", "junit", "markdown", "json")


def stand_in(name: str) -> str:
    """The value an unset secret has in a test run."""
    return f"test-{name}"


def load_for_tests(opts: Options) -> Workspace:
    """The workspace as `load` reads it (in the environment --env chooses: its var
    files are what the files render with), unset secrets given their stand-ins."""
    refuse_unchosen_environment(opts)
    secrets = run_secrets()
    first = load_workspace(
        opts.workspace_dir,
        opts.vars,
        opts.var_files,
        secrets=secrets,
        unset_secrets_allowed=True,
        environment=opts.env,
    )
    environ = dict(os.environ)
    if first.secrets.unset:
        environ.update({name: stand_in(name) for name in first.secrets.unset})
        first = load_workspace(
            opts.workspace_dir,
            opts.vars,
            opts.var_files,
            environ=environ,
            secrets=secrets,
            environment=opts.env,
        )
    if opts.organization_id:
        first.settings.organization_id = opts.organization_id
    return first


def refuse_yaml(path: Path) -> None:
    """A report is never written over a YAML file (a workspace or test file): said
    before the tests run, not after."""
    if path.suffix in (".yaml", ".yml"):
        raise AgentformError(f"{path}: a test report is not written over a YAML file")


def write_report(path: Path, text: str) -> None:
    """The report where --out says; never over a YAML file (a workspace or test file)."""
    refuse_yaml(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AgentformError(f"cannot write the test report to {path}: {exc.strerror}") from None


@click.command("test")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--filter",
    "name_filter",
    help="Run only the tests whose file path or name holds this text.",
)
@click.option(
    "--format",
    "fmt",
    type=SuggestingChoice(FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, junit for CI test reports, markdown for a pull request, json.",
)
@click.option(
    "--junit-xml",
    "junit_xml",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the results as JUnit XML to this file (for CI test reports).",
)
@workspace_options
@guarded
def test(
    opts: Options,
    files: tuple[Path, ...],
    name_filter: str | None,
    fmt: str,
    junit_xml: Path | None,
) -> int:
    """Run the workspace's tests on a fresh embedded service each, on a manual clock.

    Tests are the *.yaml files under tests/ (or the FILEs given; a directory: its
    *.yaml files). Each test applies
    the workspace to its own service, then runs its steps. Exits 1 when a test fails.
    """
    from agentform.testing import report
    from agentform.testing.files import discover, load_tests
    from agentform.testing.results import CaseResult
    from agentform.testing.runner import run_tests, selected

    refuse_unused_offline("test", "a test runs on a fresh embedded service of its own")
    if junit_xml is not None:
        refuse_yaml(junit_xml)
    workspace = load_for_tests(opts)
    paths = [p for given in files for p in (discover(given) if given.is_dir() else [given])]
    paths = paths if files else discover(workspace.root / TESTS_DIR)
    if not paths:
        where = ", ".join(str(f) for f in files) if files else str(workspace.root / "tests")
        raise AgentformError(
            f"no tests: write them in {where}/*.yaml (agentform init writes an example)"
        )
    runs = load_tests(workspace, paths)
    if not any(selected(r, c, name_filter) for r in runs for c in r.model.tests):
        raise AgentformError(f"no test's file or name holds '{name_filter}'")
    scrub = workspace.secrets.scrub

    def shown(case: CaseResult) -> None:
        if fmt == "text":
            opts.echo(report.text_line(case, scrub))
        else:  # the report is the output: progress goes to stderr
            click.echo(report.text_line(case, scrub).splitlines()[0], err=True)

    result = run_tests(workspace, runs, name_filter, on_result=shown)
    name = workspace.settings.workspace
    if fmt == "text":
        opts.echo(result.summary)
    elif fmt == "junit":
        opts.echo(report.junit(result, scrub), nl=False)
    elif fmt == "markdown":
        opts.echo(report.markdown(result, scrub, name), nl=False)
    else:
        opts.echo(report.json_report(result, scrub), nl=False)
    if junit_xml is not None:
        write_report(junit_xml, report.junit(result, scrub))
    return 0 if result.ok else 1
