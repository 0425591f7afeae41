"""The `agentform` command group."""

from __future__ import annotations

import click

from .. import __version__
from .service_cmd import service


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentform")
def cli() -> None:
    """Manage an Agent Service workspace as code."""


cli.add_command(service)


def main() -> None:
    cli()
