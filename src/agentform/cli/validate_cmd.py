"""`agentform validate`: offline checks of the files; no API call."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..errors import AgentformError
from .common import Options, guarded, load, workspace_options

# Options of the service connection, which validate never uses: given on the
# command line they are refused, so no one believes they were checked. (From
# the environment, as a pipeline sets AGENTFORM_ENDPOINT for every step, they
# are simply not used.)
UNUSED_OFFLINE = ("endpoint", "api_key_file", "organization_id", "record_cassette")


@click.command("validate")
@workspace_options
@guarded
def validate(opts: Options) -> int:
    """Render, parse and validate the workspace files, without calling the API."""
    for flag in _given_on_command_line(UNUSED_OFFLINE):
        raise AgentformError(
            f"validate works offline: {flag} is not used (nothing is called, nothing "
            "recorded); remove it, or run plan to check the files against the service"
        )
    workspace = load(opts)
    for warning in workspace.warnings:  # shown as errors are; they do not fail validate
        click.echo(workspace.secrets.scrub(warning.render()), err=True)
    count = sum(len(items) for items in workspace.declared.values())
    click.echo(
        f"Valid: {len(workspace.files)} files, {count} objects "
        f"(workspace {workspace.settings.workspace})."
    )
    return 0


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
