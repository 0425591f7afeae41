"""`agentform validate`: offline checks of the files; no API call."""

from __future__ import annotations

import click

from agentform.cli.common import Options, guarded, load, refuse_unused_offline, workspace_options
from agentform.core.words import counted


@click.command("validate")
@workspace_options
@guarded
def validate(opts: Options) -> int:
    """Render, parse and validate the workspace files, without calling the API.

    Needs no secret() value: an unset secret passes every rule a value would have to
    pass, and plan checks the value itself (and names each one missing)."""
    refuse_unused_offline("validate", "or run plan to check the files against the service")
    workspace = load(opts, unset_secrets_allowed=True)
    unset = sorted(workspace.secrets.unset)
    if unset:
        said = (
            ("secret", "is", "its value") if len(unset) == 1 else ("secrets", "are", "their values")
        )
        click.echo(
            f"note: {said[0]} {', '.join(unset)} {said[1]} not set here: plan checks {said[2]}",
            err=True,
        )
    for warning in workspace.warnings:  # shown as errors are; they do not fail validate
        click.echo(workspace.secrets.scrub(warning.render()), err=True)
    count = sum(len(items) for items in workspace.declared.values())
    click.echo(
        f"Valid: {counted(len(workspace.files), 'file')}, {counted(count, 'object')} "
        f"(workspace {workspace.settings.workspace})."
    )
    return 0
