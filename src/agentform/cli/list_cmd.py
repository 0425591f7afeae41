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
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="List every workspace x environment of the repository, with its organization "
    "and owns (offline).",
)
@workspace_options
@guarded
def list_objects(opts: Options, fmt: str, every: bool) -> int:
    """List the objects the files declare: address, live id, and whether it is live.

    Reads the service, changes nothing; secret() values are not needed. With --all,
    lists the repository's pairs from the files instead, without the service."""
    if every:
        return _list_pairs(opts, fmt)
    workspace = load(opts, unset_secrets_allowed=True)
    listed = with_api(opts, workspace, lambda api: inventory(workspace, api))
    text = inventory_json(listed) if fmt == "json" else inventory_text(listed)
    opts.echo(workspace.secrets.scrub_shown(text), nl=False)
    return 0


def _list_pairs(opts: Options, fmt: str) -> int:
    import json

    from agentform.config.repository_file import REPOSITORY_FILE, find_repository
    from agentform.core.errors import AgentformError, DiagnosticsError
    from agentform.repository.listing import listed, listed_text

    repository = find_repository(opts.workspace_dir)
    if repository is None:
        raise AgentformError(
            f"no {REPOSITORY_FILE} in {opts.workspace_dir.resolve()} or above it: "
            "list --all lists a repository's workspaces"
        )
    rows, problems = listed(repository)
    if any(p.severity == "error" for p in problems):
        raise DiagnosticsError(problems)
    if fmt == "json":
        opts.echo(json.dumps([row.as_json() for row in rows], indent=2, ensure_ascii=False))
    else:
        opts.echo(listed_text(rows), nl=False)
    return 0
