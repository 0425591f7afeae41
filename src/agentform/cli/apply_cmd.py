"""`agentform apply [PLANFILE]`: make the planned calls, with progress and a report."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from agentform.cli.common import guarded, with_policies, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.interrupts import BeforeTheChanges, stopping_on_signals
from agentform.cli.lock import lock_timeout_option, workspace_lock
from agentform.cli.options import stdout_is_terminal
from agentform.cli.plan_options import override_options, plan_options
from agentform.cli.views import format_option
from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError
from agentform.engine.apply import ApplyReport, ApplyStop, apply_plan
from agentform.engine.model import Plan
from agentform.engine.planfile import read_plan, verified_plan
from agentform.engine.planner import make_plan
from agentform.engine.verdicts import Verdicts
from agentform.kinds.context import PlanOptions
from agentform.output.progress import LiveProgress, PlainProgress
from agentform.output.view import View
from agentform.policies.changes import Judging
from agentform.policies.judge import overridden

if TYPE_CHECKING:
    from agentform.api.client import ApiClient


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def confirm(plan: Plan) -> bool:
    if not stdin_is_terminal():
        raise AgentformError("no terminal to confirm on: review the plan and use --auto-approve")
    answer = click.prompt(
        "Apply these changes? Only 'yes' is accepted", default="", show_default=False, err=True
    )
    return bool(answer.strip() == "yes")


def progress_for(run: RunContext, view: View, total: int) -> Any:
    """Live progress on a terminal, plain lines when piped; for markdown or JSON
    (their report is the output) the lines go to stderr instead."""
    lines = run.terminal_view()
    if view.lines_on_stdout and stdout_is_terminal():
        console = Console(force_terminal=True, no_color=not run.opts.use_color, highlight=False)
        return LiveProgress(lines, total, console)
    return PlainProgress(lines, run.progress(view))


@click.command("apply")
@click.argument(
    "planfile", required=False, type=click.Path(dir_okay=False, exists=True, path_type=Path)
)
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation.")
@format_option()
@override_options
@plan_options
@lock_timeout_option
@workspace_options
@guarded
def apply(
    run: RunContext,
    planfile: Path | None,
    auto_approve: bool,
    fmt: str,
    overrides: dict[str, str],
    options: PlanOptions,
    lock_timeout: float,
) -> int:
    """Make the live workspace match the files (or execute a saved plan).

    The report goes to stdout in the chosen format. Exits 1 when a change failed, when
    the apply is cancelled at the confirmation prompt, or when it is interrupted
    (Ctrl-C or SIGTERM: no new change starts, those under way finish; again: cancel them).
    """
    if planfile and (options.targets or options.excludes):
        raise click.UsageError(
            "a saved plan is applied whole: targets are chosen when the plan is made "
            "(`agentform plan --target … --out PLANFILE`)"
        )
    view = run.view(fmt)
    with run.failing_as(view, "apply"):
        saved = read_plan(planfile) if planfile else None
        root = run.opts.workspace_dir.resolve()
        workspace, policies = with_policies(lambda: load_for(run, saved), root)
        endpoint = run.endpoint().shown
        applying = _Applying(run, view, options, auto_approve)
        applying.policies, applying.overrides = policies, overrides

        async def go(api: ApiClient) -> ApplyReport | None:
            return await applying.run(api, endpoint, saved)

        locked = workspace_lock(
            workspace.root, lock_timeout, "apply", lambda m: click.echo(m, err=True)
        )
        try:
            with locked, applying.before.installed():
                report = run.with_api(go)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:  # before any change started
            if isinstance(exc, asyncio.CancelledError) and not applying.stop.requested:
                raise
            click.echo("\nInterrupted before any change started; nothing was changed.", err=True)
            return 1
    if report is None:
        click.echo("Apply cancelled; nothing was changed.", err=True)
        return 1
    applying.show_report(report, saved_plan=saved is not None)
    return 0 if report.ok else 1


def load_for(run: RunContext, saved: Plan | None) -> Workspace:
    """The workspace a saved plan is applied to: in the plan's environment, rendered
    with the variables its command line gave (checked against the files again by
    verified_plan); else the workspace of the options."""
    opts = run.opts
    if saved is None:
        return run.load()
    if opts.vars or opts.var_files:
        raise click.UsageError(
            "a saved plan is applied with the variables it was made with: --var and "
            "--var-file are given when the plan is made"
        )
    if opts.env is not None and opts.env != saved.environment:
        planned = f"environment {saved.environment}" if saved.environment else "no environment"
        raise AgentformError(
            f"the plan is for {planned}, not environment {opts.env} (--env or "
            "AGENTFORM_ENV): apply it without choosing one, or make a plan for that one"
        )
    opts.vars = dict(saved.varOverrides)
    if saved.environment is None:
        return run.load()
    return run.load_environment(saved.environment)


def _say_policies_moved(saved: Plan, fresh: Plan) -> None:
    before = saved.policies.files if saved.policies else {}
    now = fresh.policies.files if fresh.policies else {}
    if before != now:
        click.echo(
            "The policy files changed since the plan was made: the plan is judged by "
            "the policies as they are now.",
            err=True,
        )


class _Applying:
    """One apply: the plan (a saved one checked fresh, or a new one shown for
    approval), its calls with progress, and the report in the chosen format."""

    def __init__(
        self, run: RunContext, view: View, options: PlanOptions, auto_approve: bool
    ) -> None:
        self.context = run
        self.workspace = run.workspace
        self.view = view  # the report's
        self.options = options
        self.auto_approve = auto_approve
        self.policies = Judging(None)
        self.overrides: dict[str, str] = {}  # rule -> reason (--override-policy)
        self.stop = ApplyStop()  # asked for by a signal, from the lock taken on
        self.before = BeforeTheChanges(self.stop)

    async def run(self, api: ApiClient, endpoint: str, saved: Plan | None) -> ApplyReport | None:
        """The apply's report; None when the plan was not approved."""
        with self.before.planning():
            the_plan = await self._plan(api, endpoint, saved)
        allowed = overridden(the_plan.policies or Verdicts(), self.overrides)
        if saved is None:
            if not the_plan.has_changes:
                return ApplyReport()
            if not self.auto_approve:
                with self.before.at_prompt():
                    if not confirm(the_plan):
                        return None
        self.before.check()
        report = await self._carry_out(the_plan, api)
        return dataclasses.replace(report, overrides=allowed)

    async def _plan(self, api: ApiClient, endpoint: str, saved: Plan | None) -> Plan:
        """A saved plan checked fresh, or a new one shown for approval; judged."""
        if saved is not None:
            fresh = await verified_plan(saved, self.workspace, api, endpoint, self.options)
            the_plan = self.policies.judged(fresh, self.workspace)
            _say_policies_moved(saved, the_plan)
            return the_plan
        made = await make_plan(self.workspace, api, endpoint, self.options)
        the_plan = self.policies.judged(made, self.workspace)
        self._show_plan(the_plan)
        return the_plan

    def _show_plan(self, the_plan: Plan) -> None:
        """On stdout in text; else, as text, on stderr to approve it by (the report is
        the output)."""
        if self.view.lines_on_stdout:
            self.context.echo(self.view.plan(the_plan), nl=False)
        elif not self.auto_approve:
            click.echo(self.context.terminal_view().plan(the_plan), nl=False, err=True)

    async def _carry_out(self, the_plan: Plan, api: ApiClient) -> ApplyReport:
        progress: AbstractContextManager[Any] = progress_for(
            self.context, self.view, len(the_plan.changes)
        )
        values = self.workspace.sensitive_values()
        say = lambda message: click.echo(message, err=True)  # noqa: E731
        with progress as hooks, stopping_on_signals(self.stop, say):
            return await apply_plan(
                the_plan, api, self.context.opts.parallelism, hooks, values, self.stop
            )

    def show_report(self, report: ApplyReport, saved_plan: bool) -> None:
        if self.view.lines_on_stdout and not (report.results or saved_plan):
            return  # a live apply said "No changes." already
        name, env = self.workspace.settings.workspace, self.workspace.settings.environment
        shown = self.view.report(report, name, env)
        self.context.echo(shown, nl=not shown.endswith("\n"))
