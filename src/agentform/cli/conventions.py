"""Command-line conventions: global options declared to click and accepted before or
after the command (`agentform -C ws plan` = `agentform plan -C ws`), exit codes
pipelines can trust (any error is 1, usage errors included; 2 means only "changes
present" or "drifted"). What the options become is options.py.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentform.cli.options import Seconds

FORMATS = ("text", "markdown", "json")


class SuggestingChoice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2 on only
    """A choice whose refusal names the closest choice, as --target's does."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from agentform.core.problems import did_you_mean

            hint = did_you_mean(str(value), [str(c) for c in self.choices])
            if hint:
                setattr(exc, "message", exc.message.rstrip(".") + hint)  # noqa: B010 (final in click's stubs)
            raise


def _parse_var(_: Any, __: Any, values: tuple[str, ...]) -> dict[str, Any]:
    """NAME=VALUE, the value read as YAML (`n=3` a number, `m=[a, b]` a list), as
    Terraform reads -var; a text that reads as something else is quoted: `n="3"`."""
    from agentform.core.yamlpos import parse_value

    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}")
        name, _, val = item.partition("=")
        if not name.strip() or "." in name:  # `vars.x=1`: templates read vars.NAME
            hint = " (the NAME alone: templates read it as vars.NAME)" if "." in name else ""
            raise click.BadParameter(f"{name!r} is not a variable's name{hint}")
        try:
            out[name] = parse_value(val)
        except ValueError as exc:
            text = "…" if len(val) > 40 else val
            raise click.BadParameter(
                f"the value of {name} is {exc} (to pass it as text, quote it: "
                f"--var '{name}=\"{text}\"')"
            ) from None
    return out


def _refused(ctx: click.Context, param: click.Parameter, message: str) -> click.BadParameter:
    """A bad value's error, naming where the value came from: the environment variable
    when it was one (the user typed no option), else the option."""
    from_env = param.name is not None and (
        ctx.get_parameter_source(param.name) == click.core.ParameterSource.ENVIRONMENT
    )
    hint = getattr(param, "envvar", None) if from_env else None
    return click.BadParameter(
        message, ctx, param, param_hint=hint if isinstance(hint, str) else None
    )


def parse_rate_option(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> float | None:
    """`--rate-limit N`, `N/s` or `N/min` as requests per second: the provisioner's
    option and the service's (`service run --rate-limit`) read it the same way."""
    if value is None or not value.strip():
        return None
    from agentform.api.ratelimit import parse_rate
    from agentform.core.errors import AgentformError

    try:
        return parse_rate(value)
    except AgentformError as exc:
        raise _refused(ctx, param, str(exc)) from None


def check_endpoint_option(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """--endpoint / AGENTFORM_ENDPOINT: refused before anything is read, by the rule the
    files' `endpoint:` is checked by."""
    from agentform.api.endpoint_url import endpoint_problem

    if value and (problem := endpoint_problem(value)):
        raise _refused(ctx, param, f"endpoint {problem}")
    return value


def global_options() -> list[Callable[[Any], Any]]:
    """The global options (docs/guide/command-line.md#global-options) that the group and
    every workspace command take.

    None of them has a default here, so a value given after the command can be told
    from one given before it (after wins); `Options` fills in the defaults.
    """
    return [*_workspace_and_service(), *_the_run()]


def _workspace_and_service() -> list[Callable[[Any], Any]]:
    """Which workspace, and the service it is applied to."""
    return [
        click.option(
            "-C",
            "--workspace",
            "workspace_dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="The workspace directory (default: .).",
        ),
        click.option(
            "--env",  # AGENTFORM_ENV: read by every workspace command (options.py)
            "env",
            metavar="NAME",
            help="The environment of agentform.yaml to use (default: $AGENTFORM_ENV).",
        ),
        click.option(
            "--endpoint",  # ENDPOINT_ENV: read by the commands that connect (options.py)
            callback=check_endpoint_option,
            help="Override the workspace endpoint (URL or 'local').",
        ),
        click.option(
            "--api-key-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="File holding the API key (default: $AGENTFORM_API_KEY).",
        ),
        click.option(
            "--organization-id",
            type=click.UUID,
            callback=lambda _, __, value: str(value) if value else None,
            help="The organization the key must belong to (a UUID).",
        ),
    ]


def _the_run() -> list[Callable[[Any], Any]]:
    """What the run records, the variables its files are rendered with, how hard it
    presses the service, and what it shows."""
    return [
        click.option(
            "--record-cassette",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write this run's HTTP exchanges as a vcrpy cassette, scrubbed.",
        ),
        click.option(
            "--var",
            "vars",
            multiple=True,
            callback=_parse_var,
            metavar="NAME=VALUE",
            help="Set a template variable (repeatable).",
        ),
        click.option(
            "--var-file",
            "var_files",
            multiple=True,
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            metavar="FILE",
            help="Read template variables from a YAML file (repeatable; later files win).",
        ),
        click.option(
            "--parallelism",
            type=click.IntRange(min=1),
            help="Most requests in flight; below it the run adapts to the service (default 16).",
        ),
        click.option(
            "--rate-limit",  # RATE_LIMIT_ENV: as ENDPOINT_ENV
            callback=parse_rate_option,
            metavar="N/s",
            help="Requests per second for the whole run, reads and writes alike "
            "(default: none; a 429 slows the run). Env: AGENTFORM_RATE_LIMIT.",
        ),
        click.option(
            "--timeout",  # TIMEOUT_ENV: as ENDPOINT_ENV
            type=Seconds(),
            metavar="SECONDS",
            help="Seconds one request may take before it is sent again or fails: a "
            "number or a duration (30, 30s, 2m; default 30). Env: AGENTFORM_TIMEOUT.",
        ),
        click.option(
            "-v", "--verbose", is_flag=True, default=None, help="Show no-ops, calls and retries."
        ),
        click.option(
            "--color/--no-color",
            default=None,
            help="Colour (default: on a terminal; NO_COLOR and FORCE_COLOR are honoured).",
        ),
    ]


class AgentformGroup(click.Group):
    """A group whose usage errors exit 1, not click's 2: 2 means "changes present";
    its commands' output is dropped once stdout's or stderr's reader is gone (closed_stdout.py)."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            setattr(exc, "exit_code", 1)  # noqa: B010 (a class variable of click's)
            raise

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as exc:
            close = difflib.get_close_matches(args[0] if args else "", self.list_commands(ctx), n=1)
            if close and "No such command" in exc.message:
                setattr(exc, "message", f"{exc.message} Did you mean '{close[0]}'?")  # noqa: B010
            raise
        if command is not None and (typed := _single_dash_long_option(command, rest)):
            raise click.UsageError(f"No such option '{typed}'. Did you mean '-{typed}'?", ctx)
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        from agentform.cli.closed_stdout import dropping_output_once_closed

        try:
            with dropping_output_once_closed():
                return super().invoke(ctx)
        except click.UsageError as exc:
            setattr(exc, "exit_code", 1)  # noqa: B010 (a class variable of click's)
            raise


def _single_dash_long_option(command: click.Command, args: list[str]) -> str | None:
    """An argument such as `-auto-approve` (Terraform's spelling) where the command has
    `--auto-approve`: click would read it as `-a` and say only that -a does not exist."""
    longs = {
        opt
        for param in command.params
        if isinstance(param, click.Option)
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--")
    }
    for arg in args:
        if arg == "--":
            break
        name = arg.partition("=")[0]
        if name.startswith("-") and not name.startswith("--") and "-" + name in longs:
            return arg
    return None


def with_global_options(group: Callable[..., Any]) -> Callable[..., Any]:
    """Decorates the group callback: remembers the global options given before the command."""

    def callback(**given: Any) -> None:
        ctx = click.get_current_context()
        ctx.ensure_object(dict)
        ctx.obj["globals"] = given
        group()

    callback.__doc__ = group.__doc__
    callback.__name__ = group.__name__
    for decorator in reversed(global_options()):
        callback = decorator(callback)
    return callback
