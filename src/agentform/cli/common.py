"""What every workspace command shares: options, loading, the client, error handling."""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.cli.conventions import (
    ENDPOINT_ENV,
    GLOBAL_NAMES,
    RATE_LIMIT_ENV,
    TIMEOUT_ENV,
    color_wanted,
    global_options,
    merged_globals,
    stdout_is_terminal,
)
from agentform.cli.safety import run_secrets, start_run, write_crash_log
from agentform.config.environments import ENV_VARIABLE, raw_environments
from agentform.config.files import root_file
from agentform.config.loader import Workspace, load_workspace
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.core.words import counted

if TYPE_CHECKING:  # imported when a command calls the API: validate never loads httpx
    from agentform.api.client import ApiClient
    from agentform.api.connect import Endpoint

T = TypeVar("T")


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


def _seconds(text: str, variable: str) -> float:
    """A positive number of seconds, from an environment variable."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise click.ClickException(
            f"Invalid value for {variable}: {text!r} is not a number of seconds above 0"
        )
    return value


def workspace_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The global options (docs/guide/command-line.md#global-options), on each workspace
    command (also accepted before the command, on the group)."""

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        given = {k: kwargs.pop(k) for k in list(kwargs) if k in GLOBAL_NAMES}
        opts = Options.from_given(given)
        if opts.env is None:  # a pipeline sets it per job, for every step: offline ones too
            opts.env = os.environ.get(ENV_VARIABLE, "").strip() or None
        if _command_words(click.get_current_context()) not in OFFLINE_COMMANDS:
            opts.take_environment(os.environ)
        return command(opts, **kwargs)

    for decorator in reversed(global_options()):
        wrapper = decorator(wrapper)
    return wrapper


# Options of the service connection, which offline commands (validate, show) never
# use: given on the command line they are refused, so no one believes they were
# checked or recorded. (From the environment, as a pipeline sets AGENTFORM_ENDPOINT
# for every step, they are simply not used.)
UNUSED_OFFLINE = ("endpoint", "api_key_file", "organization_id", "record_cassette")
OFFLINE_COMMANDS = ("validate", "show", "test", "affected")  # test: a service of its own


def _command_words(ctx: click.Context) -> str:
    """The command as typed below `agentform` ("webhook test"): a subcommand's own name
    may be a top-level command's too (`webhook test` is not `test`)."""
    return " ".join(ctx.command_path.split()[1:])


def refuse_unused_offline(command: str, instead: str) -> None:
    """AgentformError when a connection option is given on the command line."""
    for flag in _given_on_command_line(UNUSED_OFFLINE):
        raise AgentformError(
            f"{command} works offline: {flag} is not used (nothing is called, nothing "
            f"recorded); remove it, {instead}"
        )


def _given_on_command_line(names: tuple[str, ...]) -> list[str]:
    """The flags (e.g. --endpoint) of these parameters set on the command line, in
    this command's context or a parent's (global options may sit on the group)."""
    given = []
    ctx: click.Context | None = click.get_current_context()
    while ctx is not None:
        for param in ctx.command.params:
            if param.name in names and ctx.get_parameter_source(param.name) in (
                ParameterSource.COMMANDLINE,
            ):
                given.append(param.opts[0] if param.opts else param.name)
        ctx = ctx.parent
    return given


def environment_names(opts: Options) -> list[str]:
    """The environments agentform.yaml declares ([] when none, or no file)."""
    path = root_file(opts.workspace_dir)
    return list(raw_environments(path)) if path is not None else []


def refuse_unchosen_environment(opts: Options) -> None:
    """With environments declared, a command that talks to a service needs one chosen:
    staging's files planned against prod's defaults is the mistake this prevents."""
    names = environment_names(opts)
    if names and opts.env is None:
        raise AgentformError(
            f"agentform.yaml declares environments ({', '.join(names)}): choose one with "
            f"--env NAME or {ENV_VARIABLE}"
        )


def load(opts: Options, unset_secrets_allowed: bool = False) -> Workspace:
    """The workspace of -C in the environment --env chooses (which a command that
    talks to a service must choose when environments are declared)."""
    refuse_unchosen_environment(opts)
    return load_environment(opts, opts.env, unset_secrets_allowed)


def load_environment(
    opts: Options,
    environment: str | None,
    unset_secrets_allowed: bool = False,
    template_name: str | None = None,
) -> Workspace:
    """The workspace of -C in `environment` (None: the workspace's own settings);
    `template_name`: the name its templates see instead of the environment's."""
    workspace = load_workspace(
        opts.workspace_dir,
        opts.vars,
        opts.var_files,
        secrets=run_secrets(),
        unset_secrets_allowed=unset_secrets_allowed,
        environment=environment,
        template_name=template_name,
    )
    if opts.organization_id:
        workspace.settings.organization_id = opts.organization_id
        workspace.settings.organization_from = "--organization-id"
    return workspace


def endpoint_of(opts: Options, workspace: Workspace) -> Endpoint:
    from agentform.api.connect import Endpoint
    from agentform.cli.endpoint import api_key_for

    settings = workspace.settings
    url = opts.endpoint or settings.endpoint
    key = api_key_for(url, opts.api_key_file, settings.api_key_env, settings.environment)
    return Endpoint(url, key).register(workspace.secrets)


@contextmanager
def _recording(opts: Options, workspace: Workspace) -> Iterator[None]:
    if opts.record_cassette:
        from agentform.cli.cassette import recording  # vcrpy is loaded only to record

        with recording(opts.record_cassette, workspace.secrets):
            yield
    else:
        yield


def with_api(
    opts: Options,
    workspace: Workspace,
    fn: Callable[[ApiClient], Awaitable[T]],
) -> T:
    """Runs fn with the workspace's client (inside a cassette recording when asked)."""
    from agentform.cli.endpoint import open_client

    endpoint = endpoint_of(opts, workspace)

    async def go() -> T:
        client = open_client(endpoint, workspace.root, **opts.client_settings())
        async with client as api:
            return await fn(api)

    with _recording(opts, workspace):
        return asyncio.run(go())


SHOWN_PROBLEMS = 200
"""Diagnostics shown at most: one broken large file can make hundreds of thousands."""


def refuse_overwriting(path: Path, what: str) -> None:
    """An output the user named may replace an earlier one agentform wrote (a saved
    plan, a cassette), never another file: `plan --out pools.yaml` would turn a
    workspace file into a plan, which the next apply then reads as pools removed."""
    from agentform.config.files import is_artifact

    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return  # writing it says what is wrong
    if not is_artifact(head):
        raise AgentformError(
            f"{path} exists and agentform did not write it: {what} does not replace it "
            "(name a new file)"
        )


def save_file(path: Path, text: str, what: str) -> None:
    """Writes an output the user named (`plan --out`), making its directory as
    --record-cassette does; a path that cannot be written is an error, not a crash,
    and a file agentform did not write is never replaced."""
    refuse_overwriting(path, what)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as exc:
        raise AgentformError(f"cannot write {what} to {path}: {exc.strerror}") from None


def guarded(command: Callable[..., int]) -> Callable[..., None]:
    """Translates the exception tree into messages and exit codes at the CLI boundary."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        secrets = start_run()
        try:
            code = command(*args, **kwargs)
        except DiagnosticsError as exc:
            for d in exc.diagnostics[:SHOWN_PROBLEMS]:  # masked by type where they name a value
                click.echo(d.render(), err=True)
            if len(exc.diagnostics) > SHOWN_PROBLEMS:
                left = len(exc.diagnostics) - SHOWN_PROBLEMS
                click.echo(f"… and {counted(left, 'more line')} not shown", err=True)
            n = sum(d.severity == "error" for d in exc.diagnostics)
            click.echo(f"{counted(n, 'problem')}; nothing was changed.", err=True)
            code = 1
        except AgentformError as exc:
            click.echo(secrets.scrub(f"Error: {exc}"), err=True)
            code = 1
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception:
            opts = next((a for a in args if isinstance(a, Options)), None)
            log = write_crash_log(opts.workspace_dir if opts else None, traceback.format_exc())
            click.echo(f"Unexpected error (a bug in agentform); details in {log}", err=True)
            code = 1
        sys.exit(code)

    return wrapper
