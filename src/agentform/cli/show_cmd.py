"""`agentform show PLANFILE`: a saved plan in any view (the whole of a plan whose
markdown comment was cut at GitHub's size limit). Reads only the file: no API call."""

from __future__ import annotations

from pathlib import Path

import click

from agentform.cli.common import Options, guarded, refuse_unused_offline, workspace_options
from agentform.cli.views import format_option
from agentform.engine.planfile import read_plan
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView


@click.command("show")
@click.argument("planfile", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@format_option
@click.option(
    "--no-limit", is_flag=True, help="markdown: do not cut at GitHub's 65,536 characters."
)
@workspace_options
@guarded
def show(opts: Options, planfile: Path, fmt: str, no_limit: bool) -> int:
    """Show a saved plan (`plan --out FILE`) as text, markdown or JSON."""
    refuse_unused_offline("show", "or run plan to read the service")
    plan = read_plan(planfile)
    if fmt == "json":
        opts.echo(planfile.read_text(), nl=False)
    elif fmt == "markdown":
        view = MarkdownView(limit=None if no_limit else MarkdownView().limit, verbose=opts.verbose)
        opts.echo(view.plan(plan), nl=False)
    else:
        opts.echo(TextView(opts.use_color, opts.verbose).plan(plan), nl=False)
    return 0
