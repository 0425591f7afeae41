"""Options that let a plan do what it otherwise refuses (plan and apply share them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from agentform.kinds.context import PlanOptions


def plan_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --allow-past-start, --allow-cancel-running, --target and --exclude; the command
    gets `options`."""

    @functools.wraps(command)
    def wrapper(
        *args: Any,
        allow_past_start: bool,
        allow_cancel_running: bool,
        targets: tuple[str, ...],
        excludes: tuple[str, ...],
        **kw: Any,
    ) -> Any:
        options = PlanOptions(
            allow_past_start=allow_past_start,
            allow_cancel_running=allow_cancel_running,
            targets=targets,
            excludes=excludes,
        )
        return command(*args, options=options, **kw)

    for flag, name, what in (
        ("--exclude", "excludes", "Leave out the changes of these objects and what needs them"),
        ("--target", "targets", "Plan only these objects and what they need: a partial plan"),
    ):
        wrapper = click.option(
            flag, name, multiple=True, metavar="KIND/KEY", help=f"{what} (globs, repeatable)."
        )(wrapper)
    wrapper = click.option(
        "--allow-cancel-running",
        is_flag=True,
        help="Cancel a running batch that the files remove (otherwise a warning).",
    )(wrapper)
    wrapper = click.option(
        "--allow-past-start",
        is_flag=True,
        help="Create a batch whose startAt has passed (otherwise a warning).",
    )(wrapper)
    return wrapper
