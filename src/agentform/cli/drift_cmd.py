"""`agentform drift`: a read-only plan as a drift report. Exit 0 in sync, 2 drifted,
1 on any error (so a scheduled job can tell "drifted" from "broken")."""

from __future__ import annotations

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.views import format_option
from agentform.engine.drift import drift_of
from agentform.engine.planner import make_plan


@click.command("drift")
@format_option()
@workspace_options
@guarded
def drift(run: RunContext, fmt: str) -> int:
    """Report how the service differs from the files, without changing anything."""
    view = run.view(fmt)
    with run.failing_as(view, "drift"):
        workspace = run.load()
        shown = run.endpoint().shown
        plan = run.with_api(lambda api: make_plan(workspace, api, shown))
    report = drift_of(plan)
    run.echo(view.drift(report), nl=False)
    return 2 if report.drifted else 0
