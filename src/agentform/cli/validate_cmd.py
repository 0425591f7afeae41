"""`agentform validate`: offline checks of the files; no API call. With environments
declared and none chosen, every environment is validated. With `--all DIR...`, every
workspace under the directories; with `--all` alone, every workspace of the
repository (agentform-repository.yaml) or under the current directory; and that no
two own a common name. The test files (tests/*.yaml) are checked as `agentform test`
checks them before it runs any (validate_tests.py), unless --no-tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentform.cli.common import (
    guarded,
    refuse_dirs_without_all,
    refuse_unused_offline,
    say_unset_and_warnings,
    workspace_options,
)
from agentform.cli.context import RunContext
from agentform.cli.validate_tests import Tested, TestFiles
from agentform.config.loader import Workspace
from agentform.core.diagnostics import Diagnostic
from agentform.core.errors import DiagnosticsError
from agentform.core.gcpause import collector_paused
from agentform.core.words import counted
from agentform.policies.changes import judging

if TYPE_CHECKING:
    from agentform.policies.loading import PolicySet


@click.command("validate")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Validate every workspace under DIRS (default: the repository's, else .), "
    "and that no two own a common name.",
)
@click.option(
    "--no-tests",
    "no_tests",
    is_flag=True,
    help="Do not check the test files (tests/*.yaml, which agentform test runs).",
)
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, exists=True, path_type=Path))
@workspace_options
@guarded
def validate(run: RunContext, every: bool, no_tests: bool, dirs: tuple[Path, ...]) -> int:
    """Render, parse and validate the workspace files, and its test files, without
    calling the API.

    Needs no secret() value: an unset secret passes every rule a value would have to
    pass, and plan checks the value itself (and names each one missing). With
    environments in agentform.yaml and no --env, each environment is validated."""
    refuse_unused_offline("validate", "or run plan to check the files against the service")
    refuse_dirs_without_all("validate", dirs, every)
    if every:  # here: one workspace needs none of the repository's modules
        from agentform.cli.validate_all import validate_all

        return validate_all(run.opts, list(dirs), tests=not no_tests)
    names: list[str | None] = [run.opts.env]
    if run.opts.env is None:
        names = [*run.environment_names()] or [None]
    found: dict[str | None, list[Diagnostic]] = {}
    in_tests: dict[str | None, list[Diagnostic]] = {}
    valid: list[str] = []  # said only when nothing fails: no "Valid" above an error
    tested, test_files = Tested(), TestFiles(run.opts.workspace_dir)
    with collector_paused():  # each load's objects are freed by count: no cycles to find
        for name in names:
            workspace, found[name] = _validated(run, name)
            valid += [_valid_line(workspace)] if workspace is not None else []
            if not no_tests:
                tested = test_files.checked(workspace)
                in_tests[name] = tested.problems
        policies, policy_problems = _policies(run.opts.workspace_dir)
    if problems := _together(found) + policy_problems + _together(in_tests):
        raise DiagnosticsError(problems)
    if policies is not None:
        files = counted(len(policies.files), "policy file")
        valid.append(f"Valid: {files}, {counted(len(policies.rules), 'rule')}.")
    if tested.files:
        valid.append(
            f"Valid: {counted(tested.files, 'test file')}, {counted(tested.tests, 'test')}."
        )
    click.echo("\n".join(valid))
    return 0


def _policies(root: Path) -> tuple[PolicySet | None, list[Diagnostic]]:
    """The policy files that judge the workspace's plans, or their problems."""
    try:
        return judging(root).proposed, []
    except DiagnosticsError as exc:
        return None, list(exc.diagnostics)


def _together(found: dict[str | None, list[Diagnostic]]) -> list[Diagnostic]:
    """Every environment's problems: one every environment has is said once, as it
    is; the others name their environment."""
    if len(found) <= 1:  # one environment (or none declared): said as they are
        return next(iter(found.values()), [])
    everywhere = set.intersection(*(set(problems) for problems in found.values()))
    out = list(dict.fromkeys(d for problems in found.values() for d in problems if d in everywhere))
    for name, problems in found.items():
        out += [
            replace(d, summary=f"environment {name}: {d.summary}")
            for d in problems
            if d not in everywhere
        ]
    return out


def _validated(run: RunContext, name: str | None) -> tuple[Workspace | None, list[Diagnostic]]:
    """One environment's workspace (its warnings said), or its problems."""
    try:
        workspace = run.load_environment(name, unset_secrets_allowed=True)
    except DiagnosticsError as exc:
        return None, list(exc.diagnostics)
    say_unset_and_warnings(workspace)
    return workspace, []


def _valid_line(workspace: Workspace) -> str:
    count = sum(len(items) for items in workspace.declared.values())
    environment = workspace.settings.environment
    env = f", environment {environment}" if environment else ""
    return (
        f"Valid: {counted(len(workspace.files), 'file')}, {counted(count, 'object')} "
        f"(workspace {workspace.settings.workspace}{env})."
    )
