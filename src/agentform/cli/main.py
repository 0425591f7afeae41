"""The `agentform` command group."""

from __future__ import annotations

import click

from .. import __version__
from .apply_cmd import apply
from .conventions import AgentformGroup, with_global_options
from .drift_cmd import drift
from .export_cmd import export
from .init_cmd import init
from .plan_cmd import plan
from .schema_cmd import schema
from .service_cmd import service
from .show_cmd import show
from .validate_cmd import validate
from .webhook_cmd import webhook


@click.group(cls=AgentformGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentform")
@with_global_options
def cli() -> None:
    """Manage an Agent Service workspace as code.

    Global options (-C, --endpoint, -v, --no-color, ...) go before or after the command.
    Exit codes: 0 success, 1 any error, 2 changes present (--detailed-exitcode) or drift.
    """


for command in (init, validate, plan, show, apply, drift, export, schema, service, webhook):
    cli.add_command(command)


def main() -> None:
    cli()
