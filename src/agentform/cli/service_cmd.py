"""`agentform service run|advance|prune`: the embedded Agent Service over HTTP,
moving the clock of one started with `--clock manual`, and forgetting old history."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.conventions import SuggestingChoice, parse_rate_option
from agentform.cli.options import Options
from agentform.config.environments import ENV_VARIABLE
from agentform.core.errors import AgentformError
from agentform.rules.clock import ClockWordsError, parse_duration
from agentform.rules.paths import DEFAULT_PORT
from agentform.service.store.database import DEFAULT_DB_PATH


@click.group("service")
def service() -> None:
    """The embedded Agent Service."""


@service.command("run")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="0: any free port (the banner shows it).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The state to serve. Default: that of the workspace of -C (.agentform/service.db, "
    "or .agentform/ENV/service.db in the environment --env chooses); outside a workspace, "
    f"{DEFAULT_DB_PATH}.",
)
@click.option(
    "--seed",
    "seed_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Seed file (YAML) of organizations, keys, agents, profiles. Default: demo.",
)
@click.option(
    "--rate-limit",
    callback=parse_rate_option,
    metavar="N/s",
    help="Requests per second per API key (N, N/s or N/min); above it, 429 with Retry-After.",
)
@click.option(
    "--clock",
    "clock_kind",
    type=SuggestingChoice(["wall", "manual"]),
    default="wall",
    show_default=True,
    help="manual: time stands still until `agentform service advance` moves it "
    "(schedules, execution steps and webhook retries run then, without waiting).",
)
@click.option(
    "--read-timeout",
    type=click.FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="A request's headers, and each part of its body, must arrive within it (else 408).",
)
@click.option(
    "--allow-private-webhooks",
    is_flag=True,
    help="Let webhook URLs point at link-local and cloud-metadata addresses (169.254.0.0/16, "
    "fe80::/10, fd00:ec2::254); loopback is always allowed.",
)
@click.option(
    "--retain",
    default="30d",
    show_default=True,
    metavar="AGE|never",
    callback=lambda _ctx, _param, value: parse_retain(value),
    help="Forget finished history (deliveries and their attempts, routing decisions, "
    "events, executions) older than this, on the service's clock; never: keep it all.",
)
@click.option(
    "--console/--no-console",
    default=True,
    show_default=True,
    help="Serve the web console at /console (sign in with an API key); it answers on "
    "loopback only unless --host binds elsewhere.",
)
@click.option(
    "--delivery-workers",
    type=click.IntRange(0, 64),
    default=lambda: default_delivery_workers(),
    metavar="N",
    help="Processes sending the webhook deliveries beside the one running executions "
    "(docs/service/internals.md#scaling); 0: send them in the service's own process. "
    "Default: 2, or 0 on one CPU.",
)
def run(
    host: str,
    port: int,
    db_path: Path | None,
    seed_path: Path | None,
    rate_limit: float | None,
    clock_kind: str,
    read_timeout: float,
    allow_private_webhooks: bool,
    retain: timedelta | None,
    console: bool,
    delivery_workers: int,
) -> None:
    """Serve the Agent Service API, and its web console, until stopped (Ctrl-C)."""
    from agentform.service import SeedError
    from agentform.service.server import serve

    try:
        serve(
            host,
            port,
            db_path or served_state(),
            seed_path,
            rate_limit,
            say=click.echo,
            manual=clock_kind == "manual",
            read_timeout=read_timeout,
            allow_private_webhooks=allow_private_webhooks,
            retain=retain,
            console=console,
            delivery_workers=delivery_workers,
        )
    except SeedError as exc:  # its lines are diagnostics already (file:line:col: error: ...)
        click.echo(str(exc), err=True)
        raise SystemExit(1) from None
    except AgentformError as exc:
        raise click.ClickException(str(exc)) from None


def served_state() -> Path:
    """The database `service run` serves without --db: the `local` state of the
    workspace of -C in the environment --env (or AGENTFORM_ENV) chooses, as the
    workspace's commands use it; one with environments needs one chosen. Outside
    a workspace, .agentform/service.db of -C."""
    from agentform.cli.endpoint import local_state
    from agentform.config.environments import raw_environments, selected
    from agentform.config.files import root_file

    opts = Options.from_given({})  # -C and --env given before the command (on the group)
    opts.env = opts.env or os.environ.get(ENV_VARIABLE, "").strip() or None
    root = root_file(opts.workspace_dir)
    if root is None:
        return local_state(opts.workspace_dir)
    RunContext(opts).refuse_unchosen_environment()
    chosen = selected(raw_environments(root), opts.env, str(root))
    return local_state(opts.workspace_dir, chosen.name if chosen else None)


def default_delivery_workers() -> int:
    """2 delivery workers (the live bench's best on two cores: docs/performance.md),
    but none on one CPU, where a second process only adds its own costs."""
    from agentform.core.cpus import usable_cpus

    return 0 if usable_cpus() < 2 else 2


def parse_retain(value: str) -> timedelta | None:
    """`--retain`'s value: a duration longer than 0, or `never` (None)."""
    if value.strip().lower() == "never":
        return None
    try:
        seconds = parse_duration(value)
    except ClockWordsError as exc:
        raise click.BadParameter(f"{exc}, or never") from None
    if seconds <= 0:
        raise click.BadParameter("give a duration longer than 0 (30d), or never")
    return timedelta(seconds=seconds)


@service.command("advance")
@click.argument("words", nargs=-1, required=True, metavar="DURATION | until CONDITION")
@click.option(
    "--within",
    default="1d",
    show_default=True,
    metavar="DURATION",
    help="With until: the longest the clock moves waiting for the condition.",
)
@workspace_options
@guarded
def advance(run: RunContext, words: tuple[str, ...], within: str) -> int:
    """Move the clock of a service started with `--clock manual`, running what falls due.

    DURATION: 90s, 2m, 1h30m, 1d. `until CONDITION`: move until it holds, e.g.
    `until batches/AGENT/NAME is completed` or `until executions/ID is finished`.
    Needs an admin API key (AGENTFORM_API_KEY) and the service's URL (--endpoint).
    Exit 0 when moved (and the condition held), 1 otherwise.
    """
    from agentform.cli.service_clock import advance_clock

    answer = advance_clock(run, words, within)
    from agentform.output.routing_lines import advance_line

    click.echo(advance_line(answer))
    return 0 if answer.get("met") is not False else 1


@service.command("prune")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="AGE",
    help="Forget what finished longer ago than this: 30d, 12h, 90m.",
)
@workspace_options
@guarded
def prune(run: RunContext, older_than: str) -> int:
    """Forget the organization's finished history older than AGE, now.

    Deliveries (with their attempts), routing decisions, events and executions that
    finished before then; never a pending delivery or an unfinished execution. A
    service forgets on its own what is older than its `--retain`. Needs an admin API
    key; on the `local` endpoint it prunes the workspace's state file.
    """
    from agentform.cli.service_prune import prune_history, prune_line

    click.echo(prune_line(prune_history(run, older_than)))
    return 0
