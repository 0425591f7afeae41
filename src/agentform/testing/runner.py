"""Running tests: for each, a fresh service, the workspace applied, the steps in order.

`load_tests` reads and checks every file first (all problems at once, nothing
run); `run_tests` then runs each test on its own service (session.py) in one
event loop: the apply is the engine's own plan and apply, so a test proves what
`agentform apply` would do. A step that fails ends its test with the step's
position and message; the next test starts fresh.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from agentform.api.concurrency import DEFAULT_PARALLELISM
from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.engine.apply import ApplyStop, NoHooks, apply_plan
from agentform.engine.model import Plan
from agentform.engine.planner import make_plan
from agentform.kinds.context import PlanOptions
from agentform.output.values import report_counts
from agentform.service.clock import MANUAL_START
from agentform.testing.deliveries import expect_deliveries
from agentform.testing.expectations import (
    expect_batch,
    expect_calls,
    expect_execution,
    expect_policy,
)
from agentform.testing.files import TestFileRun
from agentform.testing.model import EXPECT_SUBJECTS, Case, Step, TestFile
from agentform.testing.pages import Pages, TestRecord
from agentform.testing.parse import LoadedFile
from agentform.testing.results import CaseResult, Outcome, RunResult, StepError, StepFailed
from agentform.testing.session import (
    ENDPOINT_SHOWN,
    Call,
    Databases,
    TestService,
    admin_key,
    databases,
    open_service,
)
from agentform.testing.steps import Context, run_action


def run_tests(
    workspace: Workspace,
    files: Sequence[TestFileRun],
    name_filter: str | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    pages: Pages | None = None,
) -> RunResult:
    """Every selected test, in file order; `on_result` sees each result as it comes;
    with `pages`, each test's page is written as it ends."""
    result = RunResult()

    async def go() -> None:
        with databases() as dbs:
            for run in files:
                for index, case in enumerate(run.model.tests):
                    if not selected(run, case, name_filter):
                        continue
                    outcome = await run_case(workspace, run, index, dbs, pages)
                    result.cases.append(outcome)
                    if on_result is not None:
                        on_result(outcome)

    asyncio.run(go())
    if pages is not None:
        result.index = pages.finish()
    return result


def selected(run: TestFileRun, case: Case, name_filter: str | None) -> bool:
    """Whether `--filter` selects the test: its text is in the file's path or the
    test's name (`tests/alerts.yaml: failed refunds alert ops`)."""
    return not name_filter or name_filter in f"{run.loaded.shown}: {case.name}"


async def run_case(
    workspace: Workspace, run: TestFileRun, index: int, dbs: Databases, pages: Pages | None = None
) -> CaseResult:
    loaded = run.loaded
    case = run.model.tests[index]
    test_at = str(loaded.at("tests", index))
    if case.skip:
        return CaseResult(loaded.shown, case.name, "skipped", where=test_at, message=case.skip)
    started = time.perf_counter()
    key = admin_key(run.seed, workspace.settings.organization_id)
    service = open_service(dbs.fresh(run.seed, _start(run.model)), run.seed, run.model.start, key)
    record = TestRecord() if pages is not None else None
    async with service.api:
        outcome = await _steps(workspace, loaded, index, case, service, record)
        seconds = time.perf_counter() - started
        if outcome is None:
            result = CaseResult(loaded.shown, case.name, "passed", seconds, test_at)
        else:
            kind, where, step, message = outcome
            result = CaseResult(loaded.shown, case.name, kind, seconds, where, step, message)
        if pages is not None and record is not None:
            result = replace(result, page=pages.write(result, record, service))
    return result


def _start(model: TestFile) -> datetime:
    return model.start or MANUAL_START


async def _steps(
    workspace: Workspace,
    loaded: LoadedFile,
    index: int,
    case: Case,
    service: TestService,
    record: TestRecord | None = None,
) -> tuple[Outcome, str, str, str] | None:
    """None when every step passed, else (failed|error, where, step, message);
    `record` (for its page) learns each step and the executions it started."""
    test_at = str(loaded.at("tests", index))
    try:
        applied = await apply_workspace(workspace, service)
    except StepFailed as exc:
        return "failed", test_at, "apply", str(exc)
    except AgentformError as exc:
        return "error", test_at, "apply", _message(exc)
    apply_calls = list(service.calls)
    ctx = Context(service)
    if record is not None:
        context = await service.api.request("GET", "/context")
        record.org_id, record.named = str(context["organizationId"]), ctx.named
    for s, step in enumerate(case.steps):
        where = str(loaded.at("tests", index, "steps", s))
        failure: tuple[Outcome, str, str, str] | None = None
        try:
            await _step(ctx, workspace, step, (apply_calls, applied))
        except StepFailed as exc:
            failure = ("failed", where, _described(step), ctx.said(exc, str(exc)))
        except (StepError, AgentformError) as exc:
            failure = ("error", where, _described(step), ctx.said(exc, _message(exc)))
        if record is not None and record.org_id is not None:
            done = record.after(where, _described(step), service, record.org_id)
            done.failed = failure is not None
        if failure is not None:
            return failure
    return None


def _message(exc: Exception) -> str:
    if isinstance(exc, DiagnosticsError):
        return "\n".join(d.render() for d in exc.diagnostics)
    return str(exc)


def _described(step: Step) -> str:
    if step.expect is not None:
        subject = next(s for s in EXPECT_SUBJECTS if getattr(step.expect, s) is not None)
        return f"expect {subject}"
    return step.kind


async def apply_workspace(workspace: Workspace, service: TestService) -> Plan:
    """The workspace applied to the test's service as `agentform apply` applies it;
    then each webhook's URL routed to its receiver. A failed change fails the test.
    The plan it applied, for the policies' verdicts."""
    options = PlanOptions(now=service.clock.now())
    plan = await make_plan(workspace, service.api, ENDPOINT_SHOWN, options)
    report = await apply_plan(
        plan, service.api, DEFAULT_PARALLELISM, NoHooks(), workspace.sensitive_values(), ApplyStop()
    )
    if not report.ok:
        failed = [
            f"  {r.change.id}: {r.status}: {r.error}"
            for r in report.results
            if r.status not in ("succeeded", "already in place")
        ]
        raise StepFailed("the apply failed: " + report_counts(report) + "\n" + "\n".join(failed))
    for hook in await service.api.list_all("/webhook-integrations"):
        service.receivers.route(str(hook["url"]), str(hook["name"]))
    return plan


async def _step(
    ctx: Context, workspace: Workspace, step: Step, applied: tuple[list[Call], Plan]
) -> None:
    apply_calls, plan = applied
    expect = step.expect
    if expect is None:
        await run_action(ctx, step)
    elif expect.execution is not None:
        await expect_execution(ctx, expect)
    elif expect.batch is not None:
        await expect_batch(ctx, expect)
    elif expect.deliveries is not None:
        await expect_deliveries(ctx, expect.deliveries)
    elif expect.calls is not None:
        expect_calls(apply_calls, expect.calls)
    elif expect.policy is not None:
        expect_policy(workspace, plan, expect.policy, expect.violated is not False)
    else:
        await _expect_plan_empty(ctx, workspace)


async def _expect_plan_empty(ctx: Context, workspace: Workspace) -> None:
    options = PlanOptions(now=ctx.service.clock.now())
    plan = await make_plan(workspace, ctx.service.api, ENDPOINT_SHOWN, options)
    if plan.has_changes:
        lines = [f"  {c.id}: {c.action} ({c.reason})" for c in plan.changes]
        raise StepFailed(f"the plan is not empty: {len(plan.changes)} changes\n" + "\n".join(lines))
