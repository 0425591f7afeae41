"""`agentform list`: what the workspace manages, with live ids (Terraform's `state
list`, worked out from the files and one read of the service); with --all, the
repository's workspace x environment pairs, from the files alone: those of the
workspaces under DIRS, of --env's environment, when given (a pipeline's pair job
lists its own pair, loading no other workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentform.cli.common import guarded, refuse_dirs_without_all, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.views import format_option
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.engine.inventory import inventory
from agentform.output.inventory_view import Inventoried

if TYPE_CHECKING:
    from agentform.core.diagnostics import Diagnostic
    from agentform.repository.listing import Pairs


READ_ONLY = "list changes nothing"  # what follows from its problems (not "nothing was changed")


@click.command("list")
@format_option(("text", "json"))
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="List every workspace x environment of the repository (of the workspaces under "
    "DIRS, of --env's environment, when given), with its organization and owns (offline).",
)
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, exists=True, path_type=Path))
@workspace_options
@guarded
def list_objects(run: RunContext, fmt: str, every: bool, dirs: tuple[Path, ...]) -> int:
    """List the objects the files declare: address, live id, and whether it is live.

    Reads the service, changes nothing; secret() values are not needed. With --all,
    lists the repository's pairs from the files instead, without the service."""
    view = run.view(fmt)
    refuse_dirs_without_all("list", dirs, every)
    if every:
        pairs, problems = _pairs(run, list(dirs))
        run.echo(view.show(pairs), nl=False)
        if problems:  # after the rows it could list, so one workspace's error hides none
            raise DiagnosticsError(problems, READ_ONLY)
        return 0
    try:
        workspace = run.load(unset_secrets_allowed=True)
    except DiagnosticsError as exc:
        exc.outcome = READ_ONLY
        raise
    listed = run.with_api(lambda api: inventory(workspace, api))
    run.echo(view.show(Inventoried(listed, workspace.secrets.scrub_shown)), nl=False)
    return 0


def _pairs(run: RunContext, dirs: list[Path]) -> tuple[Pairs, list[Diagnostic]]:
    """The pairs that loaded, and the errors of their files."""
    from agentform.config.repository_file import REPOSITORY_FILE, find_repository
    from agentform.repository.listing import Pairs, listed
    from agentform.repository.pairs import pairs_under

    repository = find_repository(run.opts.workspace_dir)
    if repository is None:
        raise AgentformError(
            f"no {REPOSITORY_FILE} in {run.opts.workspace_dir.resolve()} or above it: "
            "list --all lists a repository's workspaces"
        )
    rows, problems = listed(repository, pairs_under(repository, dirs, run.opts.env))
    return Pairs(rows), [p for p in problems if p.severity == "error"]
