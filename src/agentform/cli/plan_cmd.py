"""`agentform plan`: what apply would do, as text, markdown or JSON; optionally saved."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from agentform.cli.common import (
    Options,
    endpoint_of,
    guarded,
    load,
    save_file,
    with_api,
    workspace_options,
)
from agentform.cli.plan_options import plan_options
from agentform.cli.views import format_option, markdown_errors, markdown_view, text_view
from agentform.engine.planfile import dump_plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.output.json_view import plan_json


@click.command("plan")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan (JSON) for `agentform apply FILE`.",
)
@format_option
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
    with markdown_errors(opts, fmt, "plan"):
        workspace = load(opts)
        endpoint = endpoint_of(opts, workspace).shown
        result = with_api(opts, workspace, lambda api: make_plan(workspace, api, endpoint, options))
    if out:
        save_file(out, dump_plan(result), "the plan")
    if fmt == "json":
        opts.echo(plan_json(result), nl=False)
    elif fmt == "markdown":
        opts.echo(markdown_view(opts, workspace, out).plan(result), nl=False)
    else:
        opts.echo(text_view(opts, workspace).plan(result), nl=False)
        if out:
            apply = shlex.join(["agentform", "apply", str(out)])
            opts.echo(f"Saved the plan to {out}; apply it with: {apply}")
    return 2 if detailed_exitcode and result.has_changes else 0
