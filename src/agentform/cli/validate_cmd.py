"""`agentform validate`: offline checks of the files; no API call. With `--all
DIR...`, of every workspace of a repository, and that no two own a common name."""

from __future__ import annotations

from pathlib import Path

import click

from agentform.cli.common import Options, guarded, load, refuse_unused_offline, workspace_options
from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError
from agentform.core.words import counted


@click.command("validate")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Validate every workspace under DIRS (default: .), and that no two own a common name.",
)
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, exists=True, path_type=Path))
@workspace_options
@guarded
def validate(opts: Options, every: bool, dirs: tuple[Path, ...]) -> int:
    """Render, parse and validate the workspace files, without calling the API.

    Needs no secret() value: an unset secret passes every rule a value would have to
    pass, and plan checks the value itself (and names each one missing)."""
    refuse_unused_offline("validate", "or run plan to check the files against the service")
    if dirs and not every:
        raise AgentformError(
            "validate checks the workspace of -C; to check every workspace under "
            f"{', '.join(map(str, dirs))}, add --all"
        )
    if every:
        from agentform.cli.validate_all import validate_all

        return validate_all(opts, list(dirs) or [Path(".")])
    workspace = load(opts, unset_secrets_allowed=True)
    say_unset_and_warnings(workspace)
    count = sum(len(items) for items in workspace.declared.values())
    click.echo(
        f"Valid: {counted(len(workspace.files), 'file')}, {counted(count, 'object')} "
        f"(workspace {workspace.settings.workspace})."
    )
    return 0


def say_unset_and_warnings(workspace: Workspace, prefix: str = "") -> None:
    """The secrets not set here (plan checks them) and the warnings, on stderr."""
    unset = sorted(workspace.secrets.unset)
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
