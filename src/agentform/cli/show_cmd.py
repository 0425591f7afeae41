"""`agentform show PLANFILE`: a saved plan in any view (the whole of a plan whose
markdown comment was cut at GitHub's size limit). Reads only the file: no API call."""

from __future__ import annotations

from pathlib import Path

import click

from agentform.cli.common import guarded, refuse_unused_offline, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.views import format_option
from agentform.engine.planfile import read_plan


@click.command("show")
@click.argument("planfile", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@format_option()
@click.option(
    "--no-limit", is_flag=True, help="markdown: do not cut at GitHub's 65,536 characters."
)
@workspace_options
@guarded
def show(run: RunContext, planfile: Path, fmt: str, no_limit: bool) -> int:
    """Show a saved plan (`plan --out FILE`) as text, markdown or JSON."""
    refuse_unused_offline("show", "or run plan to read the service")
    plan = read_plan(planfile)
    whole = f"run `agentform show {planfile} --no-limit`"
    run.echo(run.view(fmt, limit=not no_limit, whole=whole).plan(plan), nl=False)
    return 0
