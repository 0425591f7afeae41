"""`agentform affected --base REF`: the workspace x environment pairs of the
repository whose outcome may differ between the commit REF and the working tree
(repository/affected.py), offline: no key, no service, no secret value."""

from __future__ import annotations

import click

from agentform.cli.common import guarded, refuse_unused_offline, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.conventions import SuggestingChoice
from agentform.config.repository_file import REPOSITORY_FILE, find_repository
from agentform.core.errors import AgentformError
from agentform.core.gcpause import collector_paused


@click.command("affected")
@click.option(
    "--base",
    required=True,
    metavar="REF",
    help="The commit to compare the working tree with (a branch, tag or commit id).",
)
@click.option(
    "--format",
    "fmt",
    type=SuggestingChoice(["text", "json", "github-matrix"]),
    default="text",
    show_default=True,
    help="text for a terminal; json for programs; github-matrix for a workflow's "
    "strategy.matrix (fromJSON).",
)
@click.option("--why", is_flag=True, help="Say per pair which objects, settings or tests differ.")
@workspace_options
@guarded
def affected_pairs(run: RunContext, base: str, fmt: str, why: bool) -> int:
    """List the workspace x environment pairs whose rendered objects, settings or
    tests differ between REF and the working tree, new pairs and deleted ones.

    Offline: reads REF from git without touching the working tree, needs no key
    and no secret value. Exits 0 whether or not a pair is affected."""
    refuse_unused_offline("affected", "or run plan on each affected pair")
    from agentform.repository.affected import affected
    from agentform.repository.git_tree import resolve, tree_at
    from agentform.repository.views import AffectedShown

    repository = find_repository(run.opts.workspace_dir)
    if repository is None:
        raise AgentformError(
            f"no {REPOSITORY_FILE} in {run.opts.workspace_dir.resolve()} or above it: affected "
            "compares the workspaces of a repository"
        )
    commit = resolve(repository.root, base)
    with tree_at(repository.root, commit) as base_root, collector_paused():
        found = affected(repository, base_root)
    run.echo(run.view(fmt).show(AffectedShown(found, base, commit, why)), nl=False)
    return 0
