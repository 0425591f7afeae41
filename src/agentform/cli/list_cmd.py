"""`agentform list`: what the workspace manages, with live ids (Terraform's `state
list`, worked out from the files and one read of the service)."""

from __future__ import annotations

import click

from agentform.cli.common import Options, guarded, load, with_api, workspace_options
from agentform.cli.conventions import SuggestingChoice
from agentform.engine.inventory import inventory
from agentform.output.inventory_view import inventory_json, inventory_text


@click.command("list")
@click.option(
    "--format",
    "fmt",
    type=SuggestingChoice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for a terminal, json for programs.",
)
@workspace_options
@guarded
def list_objects(opts: Options, fmt: str) -> int:
    """List the objects the files declare: address, live id, and whether it is live.

    Reads the service, changes nothing; secret() values are not needed."""
    workspace = load(opts, unset_secrets_allowed=True)
    listed = with_api(opts, workspace, lambda api: inventory(workspace, api))
    text = inventory_json(listed) if fmt == "json" else inventory_text(listed)
    opts.echo(workspace.secrets.scrub_shown(text), nl=False)
    return 0
