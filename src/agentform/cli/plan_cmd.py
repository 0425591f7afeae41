"""`agentform plan`: what apply would do, as text or JSON; optionally saved."""

from __future__ import annotations

from pathlib import Path

import click

from ..engine.planfile import dump_plan
from ..engine.planner import make_plan
from ..kinds.context import PlanOptions
from ..output.text import TextView
from .common import (
    Options,
    endpoint_of,
    guarded,
    load,
    with_api,
    workspace_options,
)
from .plan_options import plan_options


@click.command("plan")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan (JSON) for `agentform apply FILE`.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when the plan has changes, 0 when it has none.",
)
@plan_options
@workspace_options
@guarded
def plan(
    opts: Options, out: Path | None, fmt: str, detailed_exitcode: bool, options: PlanOptions
) -> int:
    """Show the calls that would make the live workspace match the files."""
    workspace = load(opts)
    endpoint = endpoint_of(opts, workspace).url

    result = with_api(opts, workspace, lambda api: make_plan(workspace, api, endpoint, options))
    if out:
        out.write_text(dump_plan(result, workspace.secrets))
    if fmt == "json":
        click.echo(dump_plan(result, workspace.secrets), nl=False)
    else:
        view = TextView(opts.use_color, opts.verbose, workspace.secrets.scrub)
        click.echo(view.plan(result), nl=False)
        if out:
            click.echo(f"Saved the plan to {out}; apply it with: agentform apply {out}")
    return 2 if detailed_exitcode and result.has_changes else 0
