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


MAX_REASON_CHARS = 1_000


def override_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --override-policy NAME (repeatable) and --reason TEXT; the command gets
    `overrides`, each rule's name with the reason."""

    @functools.wraps(command)
    def wrapper(*args: Any, override_policy: tuple[str, ...], reason: str | None, **kw: Any) -> Any:
        if override_policy and not (reason or "").strip():
            raise click.UsageError("--override-policy needs --reason TEXT: it is recorded")
        if reason is not None and not override_policy:
            raise click.UsageError("--reason is the reason of an --override-policy NAME")
        text = " ".join((reason or "").split())
        if len(text) > MAX_REASON_CHARS:
            raise click.UsageError(f"--reason is longer than {MAX_REASON_CHARS:,} characters")
        return command(*args, overrides=dict.fromkeys(override_policy, text), **kw)

    wrapper = click.option(
        "--reason",
        metavar="TEXT",
        help="Why the mandatory policies of --override-policy may be broken (recorded).",
    )(wrapper)
    return click.option(
        "--override-policy",
        multiple=True,
        metavar="NAME",
        help="Let this mandatory policy's violations through (repeatable; needs --reason). "
        "A blocking policy cannot be overridden.",
    )(wrapper)
