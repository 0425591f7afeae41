"""What every workspace command shares: options, loading, the client, error handling."""

from __future__ import annotations

import asyncio
import functools
import sys
import tempfile
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..api.concurrency import DEFAULT_PARALLELISM
from ..api.ratelimit import parse_rate
from ..config.loader import Workspace, load_workspace
from ..errors import AgentformError, DiagnosticsError

if TYPE_CHECKING:  # imported when a command calls the API: validate never loads httpx
    from ..api.client import ApiClient
    from ..api.connect import Endpoint

T = TypeVar("T")


@dataclass
class Options:
    workspace_dir: Path = Path(".")
    endpoint: str | None = None
    api_key_file: Path | None = None
    organization_id: str | None = None
    record_cassette: Path | None = None
    verbose: bool = False
    color: bool | None = None
    vars: dict[str, str] = field(default_factory=dict)
    var_files: list[Path] = field(default_factory=list)
    parallelism: int = DEFAULT_PARALLELISM
    rate_limit: float | None = None

    @property
    def use_color(self) -> bool:
        return sys.stdout.isatty() if self.color is None else self.color


def _parse_var(_: Any, __: Any, values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}")
        name, _, val = item.partition("=")
        out[name] = val
    return out


def _parse_rate(_: Any, __: Any, value: str | None) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_rate(value)
    except AgentformError as exc:
        raise click.BadParameter(str(exc)) from None


def workspace_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The global options of DESIGN.md §4, on each workspace command."""
    decorators = [
        click.option(
            "-C",
            "--workspace",
            "workspace_dir",
            default=".",
            show_default=True,
            type=click.Path(file_okay=False, path_type=Path),
            help="The workspace directory.",
        ),
        click.option(
            "--endpoint",
            envvar="AGENTFORM_ENDPOINT",
            help="Override the workspace endpoint (URL or 'local').",
        ),
        click.option(
            "--api-key-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="File holding the API key (default: $AGENTFORM_API_KEY).",
        ),
        click.option("--organization-id", help="The organization the key must belong to."),
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
        ),
        click.option(
            "--parallelism",
            default=DEFAULT_PARALLELISM,
            show_default=True,
            type=click.IntRange(min=1),
            help="Most requests in flight; below it the run adapts to the service.",
        ),
        click.option(
            "--rate-limit",
            envvar="AGENTFORM_RATE_LIMIT",
            callback=_parse_rate,
            metavar="N/s",
            help="Requests per second for the whole run, reads and writes alike "
            "(default: none; a 429 slows the run). Env: AGENTFORM_RATE_LIMIT.",
        ),
        click.option("-v", "--verbose", is_flag=True, help="Show no-ops and API calls."),
        click.option("--color/--no-color", default=None, help="Colour (default: when a TTY)."),
    ]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        names = Options.__dataclass_fields__
        opts = Options(**{k: kwargs.pop(k) for k in list(kwargs) if k in names})
        opts.var_files = list(opts.var_files)
        return command(opts, **kwargs)

    for decorator in reversed(decorators):
        wrapper = decorator(wrapper)
    return wrapper


def load(opts: Options) -> Workspace:
    workspace = load_workspace(opts.workspace_dir, opts.vars, opts.var_files)
    if opts.organization_id:
        workspace.settings.organization_id = opts.organization_id
    return workspace


def endpoint_of(opts: Options, workspace: Workspace) -> Endpoint:
    from ..api.connect import Endpoint, resolve_api_key

    url = opts.endpoint or workspace.settings.endpoint
    return Endpoint(url, resolve_api_key(opts.api_key_file, url == "local"))


@contextmanager
def _recording(opts: Options, workspace: Workspace, api_key: str | None) -> Iterator[None]:
    if opts.record_cassette:
        from .cassette import recording  # vcrpy is loaded only to record

        with recording(opts.record_cassette, workspace.secrets, api_key):
            yield
    else:
        yield


def with_api(
    opts: Options,
    workspace: Workspace,
    fn: Callable[[ApiClient], Awaitable[T]],
) -> T:
    """Runs fn with the workspace's client (inside a cassette recording when asked)."""
    from ..api.connect import open_client

    endpoint = endpoint_of(opts, workspace)

    async def go() -> T:
        client = open_client(
            endpoint, workspace.root, concurrency=opts.parallelism, rate_limit=opts.rate_limit
        )
        async with client as api:
            return await fn(api)

    with _recording(opts, workspace, endpoint.api_key):
        return asyncio.run(go())


def guarded(command: Callable[..., int]) -> Callable[..., None]:
    """Translates the exception tree into messages and exit codes at the CLI boundary."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = command(*args, **kwargs)
        except DiagnosticsError as exc:
            for d in exc.diagnostics:
                click.echo(d.render(), err=True)
            n = sum(d.severity == "error" for d in exc.diagnostics)
            click.echo(f"{n} problem{'s' if n != 1 else ''}; nothing was changed.", err=True)
            code = 1
        except AgentformError as exc:
            click.echo(f"Error: {exc}", err=True)
            code = 1
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception:
            log = Path(tempfile.gettempdir()) / "agentform-crash.log"
            log.write_text(traceback.format_exc())
            click.echo(f"Unexpected error (a bug in agentform); details in {log}", err=True)
            code = 1
        sys.exit(code)

    return wrapper
