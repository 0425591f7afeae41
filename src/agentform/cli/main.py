"""The `agentform` command group.

Commands are imported when they are used, so a command pays only for what it
needs: `agentform --version` and `agentform validate` never import the
service (FastAPI, uvicorn), httpx or vcrpy. A new command is one line of
COMMANDS: its name and "module:attribute".

The group also takes the global options (`agentform -C ws plan`) and turns
click's usage errors into exit code 1 (see conventions.py).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Mapping

import click

from agentform import __version__
from agentform.cli.conventions import AgentformGroup, with_global_options
from agentform.core.gcpause import pause_start_up, start_up_done

COMMANDS: Mapping[str, str] = {
    "init": "agentform.cli.init_cmd:init",
    "validate": "agentform.cli.validate_cmd:validate",
    "plan": "agentform.cli.plan_cmd:plan",
    "show": "agentform.cli.show_cmd:show",
    "apply": "agentform.cli.apply_cmd:apply",
    "drift": "agentform.cli.drift_cmd:drift",
    "export": "agentform.cli.export_cmd:export",
    "import": "agentform.cli.import_cmd:import_objects",
    "list": "agentform.cli.list_cmd:list_objects",
    "affected": "agentform.cli.affected_cmd:affected_pairs",
    "env": "agentform.cli.env_cmd:env",
    "schema": "agentform.cli.schema_cmd:schema",
    "service": "agentform.cli.service_cmd:service",
    "webhook": "agentform.cli.webhook.command:webhook",
    "test": "agentform.cli.test_cmd:test",
    "policy": "agentform.cli.policy_cmd:policy",
}


class LazyGroup(AgentformGroup):
    """A group whose subcommands are imported on first use, from "module:attribute"."""

    def __init__(self, *args: object, lazy: Mapping[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.lazy, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module_name, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy[cmd_name]} is not a click command")
            self.add_command(command, cmd_name)
        start_up_done()  # the command is imported: the collector runs for it (core/gcpause.py)
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="agentform")
@with_global_options
def cli() -> None:
    """Manage an Agent Service workspace as code.

    Global options (-C, --endpoint, -v, --no-color, ...) go before or after the command.
    Exit codes: 0 success, 1 any error, 2 changes present (--detailed-exitcode) or drift.
    """


def main() -> None:
    """The `agentform` program: a process of its own (tests call `cli` in theirs).

    Three costs of start-up that a command has no use for are not paid (docs/performance.md):
    pydantic's search of every installed distribution for plugins (agentform uses
    none, and a plugin would see every value validated, secret() ones included);
    httpx's own command line (`httpx._main`, which `import httpx` loads with rich
    and pygments when they are installed, and skips when it cannot be imported: 9% of
    `validate`'s instructions); and the full collections the interpreter
    runs over every object as it exits (three, a tenth of `validate`'s processor
    time): the run's objects are frozen out of them, and go with the process."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # None in sys.modules makes an import of that name fail: httpx falls back to a stub.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    pause_start_up()  # until the command is imported (core/gcpause.py)
    try:
        cli()
    finally:
        gc.freeze()
