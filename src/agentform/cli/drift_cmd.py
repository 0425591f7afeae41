"""`agentform drift`: a read-only plan as a drift report. Exit 0 in sync, 2 drifted,
1 on any error (so a scheduled job can tell "drifted" from "broken")."""

from __future__ import annotations

import click

from agentform.cli.common import Options, endpoint_of, guarded, load, with_api, workspace_options
from agentform.cli.views import format_option, markdown_errors, markdown_view, text_view
from agentform.engine.drift import drift_of
from agentform.engine.planner import make_plan
from agentform.output.json_view import drift_json


@click.command("drift")
@format_option
@workspace_options
@guarded
def drift(opts: Options, fmt: str) -> int:
    """Report how the service differs from the files, without changing anything."""
    with markdown_errors(opts, fmt, "drift"):
        workspace = load(opts)
        endpoint = endpoint_of(opts, workspace).shown
        plan = with_api(opts, workspace, lambda api: make_plan(workspace, api, endpoint))
    report = drift_of(plan)
    if fmt == "json":
        opts.echo(drift_json(report), nl=False)
    elif fmt == "markdown":
        opts.echo(markdown_view(opts, workspace).drift(report), nl=False)
    else:
        opts.echo(text_view(opts, workspace).drift(report), nl=False)
    return 2 if report.drifted else 0
