"""The policies' verdicts as lines, shown above a plan's changes (text and markdown):
per violation its rule and level, the address and field, the field's before -> after
(masked as everywhere), the message and where the rule is written; then, with
`plan --policies-from REF`, how the working tree's rules differ and what they would
decide instead. Values come masked from output/values.py: no text is searched."""

from __future__ import annotations

from agentform.core.words import counted
from agentform.engine.model import Change, Plan
from agentform.engine.verdicts import LEVELS, Override, RuleChanges, Verdicts, Violation
from agentform.output.values import describe, value

HOW = {
    "advisory": "a warning",
    "mandatory": "apply refuses it unless overridden: --override-policy {rule} --reason TEXT",
    "blocking": "apply refuses it: no override",
}


def headline(verdicts: Verdicts) -> str:
    rules = counted(len(verdicts.rules), "rule")
    if not verdicts.violations:
        return f"Policies: {rules}, no violation."
    levels = [lvl for lvl in reversed(LEVELS) if verdicts.at(lvl)]
    parts = ", ".join(f"{len(verdicts.at(lvl))} {lvl}" for lvl in levels)
    return f"Policies: {counted(len(verdicts.violations), 'violation')} ({parts}) of {rules}."


def violation_lines(plan: Plan, v: Violation, verdicts: Verdicts) -> list[str]:
    """The violation's head line and its detail lines (to be indented)."""
    where = v.address or "the whole plan"
    field = f", {v.path}" if v.path else ""
    what = "could not be evaluated" if v.outcome == "error" else "violated"
    head = f"{v.level} rule {v.rule} {what} at {where}{field}"
    detail = _field_lines(plan, v)
    detail.append(v.message)
    rule = next((r for r in verdicts.rules if r.name == v.rule), None)
    written = f"rule at {rule.file}:{rule.line}; " if rule else ""
    detail.append(written + HOW[v.level].format(rule=v.rule))
    return [head, *detail]


def _field_lines(plan: Plan, v: Violation) -> list[str]:
    change = _change(plan, v.address)
    if change is None or v.path is None:
        return []
    for fc in change.changedFields:
        if fc.field == v.path:
            return describe(fc)
    shown = change.after if change.after is not None else change.before
    if isinstance(shown, dict) and v.path in shown:
        return [f"{v.path}: {value(shown[v.path])}"]
    return []


def _change(plan: Plan, address: str | None) -> Change | None:
    return next((c for c in plan.changes if c.id == address), None) if address else None


def rule_change_lines(changes: RuleChanges) -> list[str]:
    """How the working tree's rules differ from those of `judgedBy`, as lines."""
    head = (
        f"Policy changes: the plan is judged by the policies of {changes.judgedBy}; "
        "the working tree's policies differ:"
    )
    lines = [head]
    for label, names in (
        ("added", changes.added),
        ("removed", changes.removed),
        ("changed", changes.changed),
    ):
        if names:
            lines.append(f"  {label}: {', '.join(names)}")
    if not (changes.added or changes.removed or changes.changed):
        lines = [f"Policies judged by {changes.judgedBy}: the working tree's are the same."]
    for label, found in (
        ("would be violated under the working tree's rules", changes.wouldViolate),
        ("would pass under the working tree's rules", changes.wouldPass),
    ):
        for v in found:
            lines.append(f"  {label}: {v.level} rule {v.rule} at {v.address or 'the plan'}")
    return lines


def override_lines(overrides: tuple[Override, ...]) -> list[str]:
    lines = []
    for o in overrides:
        where = ", ".join(v.address or "the plan" for v in o.violations)
        lines.append(f"Policy {o.rule} overridden at {where}: {o.reason}")
    return lines
