"""`agentform apply [PLANFILE]`: make the planned calls, with progress and a report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..engine.apply import ApplyReport, ChangeResult, apply_plan
from ..engine.model import Change, Plan
from ..engine.planfile import check_fresh, load_plan, unmask
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

if TYPE_CHECKING:
    from ..api.client import ApiClient


class EchoHooks:
    def __init__(self, view: TextView, enabled: bool) -> None:
        self.view = view
        self.enabled = enabled

    def started(self, change: Change) -> None:
        pass

    def finished(self, result: ChangeResult) -> None:
        if self.enabled:
            click.echo(self.view.progress(result))


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def confirm(plan: Plan) -> bool:
    if not stdin_is_terminal():
        raise click.UsageError("no terminal to confirm on: review the plan and use --auto-approve")
    answer = click.prompt(
        "Apply these changes? Only 'yes' is accepted", default="", show_default=False
    )
    return bool(answer.strip() == "yes")


@click.command("apply")
@click.argument(
    "planfile", required=False, type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: print the final report as JSON.",
)
@plan_options
@workspace_options
@guarded
def apply(
    opts: Options,
    planfile: Path | None,
    auto_approve: bool,
    fmt: str,
    options: PlanOptions,
) -> int:
    """Make the live workspace match the files (or execute a saved plan)."""
    workspace = load(opts)
    endpoint = endpoint_of(opts, workspace).url
    view = TextView(opts.use_color, opts.verbose, workspace.secrets.scrub)
    saved = load_plan(planfile.read_text()) if planfile else None

    async def go(api: ApiClient) -> tuple[Plan, ApplyReport | None]:
        if saved is not None:
            await check_fresh(saved, workspace, api)
            the_plan = unmask(saved, workspace)
        else:
            the_plan = await make_plan(workspace, api, endpoint, options)
            if fmt == "text":
                click.echo(view.plan(the_plan), nl=False)
            if not the_plan.has_changes:
                return the_plan, None
            if not auto_approve and not confirm(the_plan):
                return the_plan, None
        hooks = EchoHooks(view, fmt == "text")
        values = workspace.sensitive_values()
        return the_plan, await apply_plan(the_plan, api, opts.parallelism, hooks, values)

    the_plan, report = with_api(opts, workspace, go)
    if report is None:
        if the_plan.has_changes:
            click.echo("Apply cancelled; nothing was changed.", err=fmt == "json")
        if fmt == "json":
            click.echo(json.dumps(ApplyReport().to_json(), indent=2))
        return 0
    if fmt == "json":
        click.echo(workspace.secrets.scrub(json.dumps(report.to_json(), indent=2)))
    else:
        click.echo(view.report(report))
    return 0 if report.ok else 1
