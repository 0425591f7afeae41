"""What every workspace command shares: the global options made into its run
context (`workspace_options`), the connection options offline commands refuse,
and the boundary where the exception tree becomes messages and exit codes
(`guarded`). The run itself (workspace, clients, view) is context.py's.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from agentform.cli.context import RunContext
from agentform.cli.conventions import global_options
from agentform.cli.options import GLOBAL_NAMES, Options
from agentform.cli.safety import start_run, write_crash_log
from agentform.config.environments import ENV_VARIABLE
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.core.words import counted

if TYPE_CHECKING:
    from pathlib import Path

    from agentform.config.loader import Workspace
    from agentform.core.diagnostics import Diagnostic
    from agentform.policies.changes import Judging


def workspace_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The global options (docs/guide/command-line.md#global-options), on each workspace
    command (also accepted before the command, on the group); the command is called
    with the run's context first."""

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        given = {k: kwargs.pop(k) for k in list(kwargs) if k in GLOBAL_NAMES}
        opts = Options.from_given(given)
        if opts.env is None:  # a pipeline sets it per job, for every step: offline ones too
            opts.env = os.environ.get(ENV_VARIABLE, "").strip() or None
        if _command_words(click.get_current_context()) not in OFFLINE_COMMANDS:
            opts.take_environment(os.environ)
        return command(RunContext(opts), **kwargs)

    for decorator in reversed(global_options()):
        wrapper = decorator(wrapper)
    return wrapper


# Options of the service connection, which offline commands (validate, show) never
# use: given on the command line they are refused, so no one believes they were
# checked or recorded. (From the environment, as a pipeline sets AGENTFORM_ENDPOINT
# for every step, they are simply not used.)
UNUSED_OFFLINE = ("endpoint", "api_key_file", "organization_id", "record_cassette")
# test: a service of its own; policy test: none
OFFLINE_COMMANDS = ("validate", "show", "test", "affected", "policy test")


def _command_words(ctx: click.Context) -> str:
    """The command as typed below `agentform` ("webhook test"): a subcommand's own name
    may be a top-level command's too (`webhook test` is not `test`)."""
    return " ".join(ctx.command_path.split()[1:])


def refuse_unused_offline(command: str, instead: str) -> None:
    """AgentformError when a connection option is given on the command line."""
    for flag in _given_on_command_line(UNUSED_OFFLINE):
        raise AgentformError(
            f"{command} works offline: {flag} is not used (nothing is called, nothing "
            f"recorded); remove it, {instead}"
        )


def refuse_dirs_without_all(command: str, dirs: tuple[Path, ...], every: bool) -> None:
    """AgentformError for `COMMAND DIRS` without --all: DIRS choose the workspaces
    --all goes through; without it the command would work on -C's and ignore them."""
    if dirs and not every:
        raise AgentformError(
            f"{command} DIRS needs --all: without it, {command} works on the workspace of -C; "
            f"add --all for every workspace under {', '.join(map(str, dirs))}"
        )


def _given_on_command_line(names: tuple[str, ...]) -> list[str]:
    """The flags (e.g. --endpoint) of these parameters set on the command line, in
    this command's context or a parent's (global options may sit on the group)."""
    given = []
    ctx: click.Context | None = click.get_current_context()
    while ctx is not None:
        for param in ctx.command.params:
            if param.name in names and ctx.get_parameter_source(param.name) in (
                ParameterSource.COMMANDLINE,
            ):
                given.append(param.opts[0] if param.opts else param.name)
        ctx = ctx.parent
    return given


SHOWN_PROBLEMS = 200
"""Diagnostics shown at most: one broken large file can make hundreds of thousands."""


def guarded(command: Callable[..., int]) -> Callable[..., None]:
    """Translates the exception tree into messages and exit codes at the CLI boundary."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        secrets = start_run()
        try:
            code = command(*args, **kwargs)
        except DiagnosticsError as exc:
            for d in exc.diagnostics[:SHOWN_PROBLEMS]:  # masked by type where they name a value
                click.echo(d.render(), err=True)
            if len(exc.diagnostics) > SHOWN_PROBLEMS:
                left = len(exc.diagnostics) - SHOWN_PROBLEMS
                click.echo(f"… and {counted(left, 'more line')} not shown", err=True)
            n = sum(d.severity == "error" for d in exc.diagnostics)
            click.echo(f"{counted(n, 'problem')}; {exc.outcome}.", err=True)
            code = 1
        except AgentformError as exc:
            click.echo(secrets.scrub(f"Error: {exc}"), err=True)
            code = 1
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception:
            run = next((a for a in args if isinstance(a, RunContext)), None)
            log = write_crash_log(run.opts.workspace_dir if run else None, traceback.format_exc())
            click.echo(f"Unexpected error (a bug in agentform); details in {log}", err=True)
            code = 1
        sys.exit(code)

    return wrapper


def say_unset_and_warnings(workspace: Workspace, prefix: str = "") -> None:
    """The secrets not set here (plan checks them) and the warnings, on stderr."""
    unset = sorted(workspace.unset_secrets)
    if unset:
        said = (
            ("secret", "is", "its value") if len(unset) == 1 else ("secrets", "are", "their values")
        )
        click.echo(
            f"{prefix}note: {said[0]} {', '.join(unset)} {said[1]} not set here: "
            f"plan checks {said[2]}",
            err=True,
        )
    for warning in workspace.warnings:  # shown as errors are; they do not fail validate
        click.echo(prefix + workspace.secrets.scrub(warning.render()), err=True)


def with_policies(
    load: Callable[[], Workspace], root: Path, ref: str | None = None
) -> tuple[Workspace, Judging]:
    """The workspace `load` gives and the policies that judge its plans (under `root`,
    and those of `ref`), both checked before any call: the problems of both said
    together, as validate says them, not the policies' after the workspace's mend."""
    from agentform.policies.changes import judging  # plan and apply's, not every command's

    problems: list[Diagnostic] = []
    workspace = policies = None
    try:
        workspace = load()
    except DiagnosticsError as exc:
        problems += exc.diagnostics
    try:
        policies = judging(root, ref)
    except DiagnosticsError as exc:
        problems += exc.diagnostics
    if workspace is None or policies is None:
        raise DiagnosticsError(problems)
    return workspace, policies
