"""The terminal view: a plan as Terraform users expect to read it, and the apply report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from agentform.core.words import counted
from agentform.engine.drift import DRIFT_CLASSES, DriftReport
from agentform.engine.model import Change, Plan
from agentform.engine.targets import PARTIAL
from agentform.engine.verdicts import Verdicts
from agentform.output.policy_lines import (
    headline,
    override_lines,
    rule_change_lines,
    violation_lines,
)
from agentform.output.values import (
    describe,
    known_after_create,
    plan_summary,
    report_counts,
    summarised,
    value,
    warning_text,
)
from agentform.output.view import View

if TYPE_CHECKING:  # the apply engine imports httpx: an offline view (env diff) must not
    from agentform.engine.apply import ApplyReport, ChangeResult

SIGNS = {
    "create": ("+", "green"),
    "update": ("~", "yellow"),
    "rename": ("~", "yellow"),
    "replace": ("-/+", "magenta"),
    "cancel": ("x", "red"),
    "delete": ("-", "red"),
}
LINES_PER_FIELD = 10  # a field change shows at most this many lines unless -v
DRIFT_SIGNS = {
    "changed": ("~", "yellow"),
    "missing": ("+", "green"),
    "undeclared": ("-", "red"),
    "declaredAbsent": ("-", "red"),
}


def _header(doc: Plan | DriftReport) -> str:
    """The first line: the workspace, its environment, the service and organization."""
    environment = f" (environment {doc.environment})" if doc.environment else ""
    return (
        f"Workspace {doc.workspace}{environment} on {doc.endpoint}, organization "
        f"{doc.organizationName} ({doc.organizationId})"
    )


class TextView(View):
    """For a terminal: progress lines are part of the output."""

    name = "text"
    lines_on_stdout = True

    def __init__(
        self, color: bool = False, verbose: bool = False, scrub: Callable[[str], str] = lambda s: s
    ) -> None:
        self.color = color
        self.verbose = verbose
        self.scrub = scrub

    def _style(self, text: str, fg: str | None = None, bold: bool = False) -> str:
        return click.style(text, fg=fg, bold=bold) if self.color else text

    def plan(self, plan: Plan) -> str:
        lines = [_header(plan), ""]
        first = [w for w in plan.warnings if w.message.startswith(PARTIAL)]
        for warning in first:  # a partial plan says so in its header
            lines += [self._style(f"Warning: {warning_text(warning)}", "yellow", bold=True), ""]
        if plan.policies is not None:
            lines += self._policies(plan, plan.policies)
        for change in plan.changes:
            lines += self._change(change)
        if self.verbose and plan.noops:
            lines.append("No-ops:")
            lines += [f"  = {n.kind}/{n.key}: {n.reason}" for n in plan.noops]
            lines.append("")
        later = [w for w in plan.warnings if w not in first]
        for warning in later:
            lines.append(self._style(f"Warning: {warning_text(warning)}", "yellow"))
        if later:
            lines.append("")
        head, rest = plan_summary(plan)
        lines.append(self._style(head, bold=True) + rest)
        return self.scrub("\n".join(lines) + "\n")

    def _policies(self, plan: Plan, verdicts: Verdicts) -> list[str]:
        """The verdicts above the changes: each violation at its field."""
        colour = "red" if verdicts.violations else "green"
        lines = [self._style(headline(verdicts), colour, bold=True)]
        for v in verdicts.violations:
            head, *detail = violation_lines(plan, v, verdicts)
            level_colour = "yellow" if v.level == "advisory" else "red"
            lines.append(self._style(f"  ! {head}", level_colour, bold=True))
            lines += [f"      {line}" for line in detail]
        if verdicts.ruleChanges is not None:
            lines += rule_change_lines(verdicts.ruleChanges)
        return [*lines, ""]

    def _change(self, change: Change) -> list[str]:
        sign, colour = SIGNS[change.action]
        head = self._style(f"  {sign} {change.id}", colour, bold=True)
        lines = [f"{head}  {change.action}: {change.reason}"]
        if change.action == "create" and change.after:
            for k, v in change.after.items():
                if k == "name":
                    continue
                if isinstance(v, list | tuple) and any(isinstance(i, dict) for i in v):
                    head, shown = summarised(v, self.verbose)
                    lines.append(f"      {k}:{head}")
                    lines += [f"        - {value(i)}" for i in shown]
                else:
                    lines.append(f"      {k}: {value(v)}")
        for field_change in change.changedFields:
            described = describe(field_change)
            if not self.verbose and len(described) > LINES_PER_FIELD:
                more = len(described) - LINES_PER_FIELD
                described = [*described[:LINES_PER_FIELD], f"... {more} more lines (-v shows all)"]
            lines += [f"      {line}" for line in described]
        lines += [f"      {line}" for line in known_after_create(change)]
        if self.verbose:
            for call in change.calls:
                lines.append(self._style(f"      {call.method} {call.path}", "cyan"))
        lines.append("")
        return lines

    def drift(self, drift: DriftReport) -> str:
        lines = [_header(drift), ""]
        for item in drift.items:
            sign, colour = DRIFT_SIGNS[item.drift]
            head = self._style(f"  {sign} {item.id}", colour, bold=True)
            lines.append(f"{head}  {DRIFT_CLASSES[item.drift]} ({item.reason})")
            for field_change in item.fields:
                lines += [f"      {line}" for line in describe(field_change)]
            lines.append("")
        for warning in drift.warnings:
            lines.append(self._style(f"Warning: {warning_text(warning)}", "yellow"))
        if drift.drifted:
            parts = ", ".join(f"{n} {label}" for label, n in drift.counts_by_label().items() if n)
            head = f"Drift: {counted(len(drift.items), 'object', 'differ')} from the files"
            lines.append(self._style(head, "red", bold=True) + f" ({parts}).")
        else:
            lines.append(self._style("No drift.", bold=True) + " The service matches the files.")
        return self.scrub("\n".join(lines) + "\n")

    def progress(self, result: ChangeResult) -> str:
        change = result.change
        if result.status == "succeeded":
            mark = self._style("done", "green")
        elif result.status == "already in place":
            mark = self._style("already in place", "green")
        elif result.status == "failed":
            mark = self._style("FAILED", "red", bold=True)
        else:
            mark = self._style("not attempted", "yellow")
        text = f"  {change.action} {change.id}: {mark}"
        return self.scrub(text + (f" ({result.error})" if result.error else ""))

    def report(
        self, report: ApplyReport, workspace: str = "", environment: str | None = None
    ) -> str:
        """The counts alone (and the policies overridden): the plan and the progress
        said the rest."""
        line = self._style(report_counts(report), "green" if report.ok else "red", bold=True)
        return self.scrub("\n".join([*override_lines(report.overrides), line]))
