"""`agentform plan`: what apply would do, as text, markdown or JSON; optionally saved."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from agentform.cli.common import guarded, with_policies, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.files import refuse_overwriting, save_file
from agentform.cli.plan_options import plan_options
from agentform.cli.views import format_option
from agentform.engine.planfile import dump_plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions


@click.command("plan")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan (JSON) for `agentform apply FILE`.",
)
@format_option()
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when the plan has changes, 0 when it has none.",
)
@click.option(
    "--policies-from",
    metavar="REF",
    help="Judge the plan by the policies of this git ref (a pull request's base branch) "
    "and show how the working tree's policies differ.",
)
@plan_options
@workspace_options
@guarded
def plan(
    run: RunContext,
    out: Path | None,
    fmt: str,
    detailed_exitcode: bool,
    policies_from: str | None,
    options: PlanOptions,
) -> int:
    """Show the calls that would make the live workspace match the files, and what
    the policies (policies/*.yaml) say of them."""
    view = run.view(fmt, saved=out)
    with run.failing_as(view, "plan"):
        if out:
            refuse_overwriting(out, "the plan")  # before any call
        root = run.opts.workspace_dir.resolve()
        workspace, policies = with_policies(run.load, root, policies_from)
        shown = run.endpoint().shown
        made = run.with_api(lambda api: make_plan(workspace, api, shown, options))
        result = policies.judged(made, workspace)
    if out:
        save_file(out, dump_plan(result), "the plan")
    run.echo(view.plan(result), nl=False)
    if out and view.lines_on_stdout:
        apply = shlex.join(["agentform", "apply", str(out)])
        run.echo(f"Saved the plan to {out}; apply it with: {apply}")
    return 2 if detailed_exitcode and result.has_changes else 0
