"""The global options of one run (docs/guide/command-line.md#global-options), as
given before or after the command, over their environment variables, and when
the output is coloured. `conventions.py` declares them to click; this is what they
become: one `Options`, which the run context (context.py) owns.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import click

from agentform.api import DEFAULT_PARALLELISM
from agentform.core.errors import AgentformError

# Not envvars of their options: click would check them for every command, --help,
# validate and show included, though only the commands that connect use them.
ENDPOINT_ENV = "AGENTFORM_ENDPOINT"
RATE_LIMIT_ENV = "AGENTFORM_RATE_LIMIT"
TIMEOUT_ENV = "AGENTFORM_TIMEOUT"


@dataclass
class Options:
    workspace_dir: Path = Path(".")
    env: str | None = None  # the environment chosen (--env, AGENTFORM_ENV)
    endpoint: str | None = None
    api_key_file: Path | None = None
    organization_id: str | None = None
    record_cassette: Path | None = None
    verbose: bool = False
    color: bool | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    var_files: list[Path] = field(default_factory=list)
    parallelism: int = DEFAULT_PARALLELISM
    rate_limit: float | None = None
    timeout: float | None = None  # seconds per request; None: the client's default

    @classmethod
    def from_given(cls, given: dict[str, Any]) -> Options:
        """The options given after the command over those given before it, then defaults."""
        values = {k: v for k, v in merged_globals(given).items() if v is not None}
        values["verbose"] = bool(values.get("verbose"))
        return cls(**values)

    def take_environment(self, environ: Mapping[str, str]) -> None:
        """AGENTFORM_ENDPOINT and AGENTFORM_RATE_LIMIT where the options were not given,
        checked by the options' own rules; a bad value is refused naming its variable."""
        from agentform.api.endpoint_url import endpoint_problem

        endpoint = environ.get(ENDPOINT_ENV, "").strip()
        if self.endpoint is None and endpoint:
            if problem := endpoint_problem(endpoint):
                raise click.ClickException(f"Invalid value for {ENDPOINT_ENV}: endpoint {problem}")
            self.endpoint = endpoint
        rate = environ.get(RATE_LIMIT_ENV, "").strip()
        if self.rate_limit is None and rate:
            from agentform.api.ratelimit import parse_rate

            try:
                self.rate_limit = parse_rate(rate)
            except AgentformError as exc:
                raise click.ClickException(f"Invalid value for {RATE_LIMIT_ENV}: {exc}") from None
        timeout = environ.get(TIMEOUT_ENV, "").strip()
        if self.timeout is None and timeout:
            self.timeout = _seconds(timeout, TIMEOUT_ENV)

    def client_settings(self) -> dict[str, Any]:
        """How the run's client paces and waits, and what it says while it does."""
        from agentform.cli.retry_notices import StderrNotices

        return {
            "concurrency": self.parallelism,
            "rate_limit": self.rate_limit,
            "timeout": self.timeout,
            "notices": StderrNotices(self.verbose),
        }

    @property
    def use_color(self) -> bool:
        return color_wanted(self.color, stdout_is_terminal())

    def echo(self, text: str, nl: bool = True, err: bool = False) -> None:
        """Prints, keeping colour codes when colour is wanted even if not a terminal."""
        click.echo(text, nl=nl, err=err, color=None if err else self.use_color)


GLOBAL_NAMES = tuple(f.name for f in fields(Options))
"""The parameters of the global options: Options' fields, each one option."""


def seconds(text: str, *, zero: bool = False) -> float:
    """Seconds written as a number (`30`) or a duration (`30s`, `2m`, `1h30m`), as
    every option taking a time writes it: above 0, or 0 too when `zero` allows it
    (`--lock-timeout 0s`); ValueError saying what is accepted."""
    try:
        value = float(text)
    except ValueError:
        from agentform.rules.clock import ClockWordsError, parse_duration

        try:
            value = parse_duration(text)
        except ClockWordsError:
            value = float("nan")
    if not (value >= 0 if zero else value > 0) or value == float("inf"):
        least = "0 or more" if zero else "above 0"
        raise ValueError(f"{text!r} is not a duration such as 30s or 2m, nor seconds {least}")
    return value


class Seconds(click.ParamType):  # type: ignore[type-arg]  # generic in some click stubs only
    """An option's `seconds` (`--timeout 30`, `--timeout 30s`, `--lock-timeout 0s`)."""

    name = "seconds"

    def __init__(self, *, zero: bool = False) -> None:
        self.zero = zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        try:
            return seconds(str(value), zero=self.zero)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _seconds(text: str, variable: str) -> float:
    """`seconds` from an environment variable, refused naming it."""
    try:
        return seconds(text)
    except ValueError as exc:
        raise click.ClickException(f"Invalid value for {variable}: {exc}") from None


def merged_globals(given: dict[str, Any]) -> dict[str, Any]:
    """The command's own global options over those given before the command."""
    ctx = click.get_current_context(silent=True)
    before: dict[str, Any] = {}
    if ctx is not None:
        root = ctx.find_root()
        if isinstance(root.obj, dict):
            before = root.obj.get("globals", {})
    out: dict[str, Any] = {}
    for name in GLOBAL_NAMES:
        mine, theirs = given.get(name), before.get(name)
        if name == "vars":
            out[name] = {**(theirs or {}), **(mine or {})}
        elif name == "var_files":
            out[name] = [*(theirs or ()), *(mine or ())]
        else:
            out[name] = mine if mine is not None else theirs
    return out


def color_wanted(
    flag: bool | None, is_terminal: bool, environ: Mapping[str, str] | None = None
) -> bool:
    """--color/--no-color, then NO_COLOR (any value), then FORCE_COLOR (any value but
    empty, 0 or false), then TERM=dumb, then whether the output is a terminal."""
    env = os.environ if environ is None else environ
    if flag is not None:
        return flag
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR", "").lower() not in ("", "0", "false"):
        return True
    if env.get("TERM") == "dumb":
        return False
    return is_terminal


def stdout_is_terminal() -> bool:
    return sys.stdout is not None and sys.stdout.isatty()  # None: the shell closed it
