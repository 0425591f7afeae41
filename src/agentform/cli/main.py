"""The `agentform` command group."""

from __future__ import annotations

import click

from .. import __version__
from .apply_cmd import apply
from .export_cmd import export
from .init_cmd import init
from .plan_cmd import plan
from .schema_cmd import schema
from .service_cmd import service
from .validate_cmd import validate
from .webhook_cmd import webhook


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentform")
def cli() -> None:
    """Manage an Agent Service workspace as code."""


for command in (init, validate, plan, apply, export, schema, service, webhook):
    cli.add_command(command)


def main() -> None:
    cli()
