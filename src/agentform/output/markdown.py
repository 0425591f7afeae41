"""The markdown view: a plan, an apply report or a drift report as GitHub-flavoured
markdown for a pull-request comment or an issue.

Layout: a stable HTML comment marker naming the workspace (a pipeline finds and
updates its own comment by it), warnings and errors, a summary line and a table of
counts per kind, then one collapsible `<details>` section per kind holding a `diff`
block. A document longer than `limit` characters (GitHub's comment limit) is cut
between two changes, never inside one, every open block is closed, and a last line
says what was left out and where the whole of it is (output/markdown_document.py).
Its pieces (marker, title, code spans, cells, tables, alerts) are output/markdown_blocks.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from agentform.core.words import counted
from agentform.engine.drift import DRIFT_CLASSES, DriftReport
from agentform.engine.model import Change, Plan
from agentform.engine.verdicts import LEVELS, Verdicts
from agentform.output.markdown_blocks import alerts, code, count_table, html, marker, short, title
from agentform.output.markdown_document import GITHUB_LIMIT, Section, capped
from agentform.output.policy_lines import (
    headline,
    override_lines,
    rule_change_lines,
    violation_lines,
)
from agentform.output.values import (
    diff_lines,
    known_after_create,
    object_lines,
    plan_summary,
    report_counts,
    warning_text,
)
from agentform.output.view import View

if TYPE_CHECKING:  # the apply engine imports httpx: an offline view (env diff) must not
    from agentform.engine.apply import ApplyReport

SIGNS = {"create": "+", "update": "~", "rename": "~", "replace": "~", "delete": "-", "cancel": "-"}
ACTIONS = ("create", "update", "rename", "replace", "delete", "cancel")
SHOWN_VIOLATIONS = 20  # of each level, above the changes; the rest are counted


def _actions(changes: Iterable[Change]) -> list[str]:
    present: set[str] = {c.action for c in changes}
    return [a for a in ACTIONS if a in present] + sorted(present - set(ACTIONS))


def change_entry(
    change: Change, scrub: Callable[[str], str], status: str = "", verbose: bool = False
) -> list[str]:
    sign = SIGNS.get(change.action, "~")
    head = f"{sign} {change.id}: {change.action}, {change.reason}"
    lines = [head + (f" ({status})" if status else "")]
    if change.action == "create":
        lines += object_lines(sign, change.after, verbose=verbose)
    elif change.changedFields:
        for fc in change.changedFields:
            lines += diff_lines(fc)
    elif change.action in ("delete", "cancel"):
        lines += object_lines(sign, change.before, verbose=verbose)
    lines += [f"{sign}    {line}" for line in known_after_create(change)]
    return [scrub(line) for line in lines]


class MarkdownView(View):
    name = "markdown"

    def __init__(
        self,
        scrub: Callable[[str], str] = lambda s: s,
        limit: int | None = GITHUB_LIMIT,
        whole: str = "run `agentform plan` to see the whole plan",
        verbose: bool = False,
    ) -> None:
        self.scrub = scrub
        self.limit = limit
        self.whole = whole  # where the whole document can be seen, when it is cut
        self.verbose = verbose

    # -- plan ----------------------------------------------------------------
    def plan(self, plan: Plan) -> str:
        head = [marker("plan", plan.workspace, plan.environment), ""]
        head += alerts("WARNING", [self.scrub(warning_text(w)) for w in plan.warnings])
        head += [title("plan", plan.workspace, plan.environment), ""]
        bold, rest = plan_summary(plan)
        head.append(f"**{bold}**{rest}")
        head += ["", self._where(plan), ""]
        if plan.policies is not None:
            head += self._policies(plan, plan.policies)
        actions = _actions(plan.changes)
        kinds = list(dict.fromkeys(c.kind for c in plan.changes))
        head += count_table(((c.kind, c.action) for c in plan.changes), actions, actions)
        sections = []
        for kind in kinds:
            mine = [c for c in plan.changes if c.kind == kind]
            counts = ", ".join(f"{sum(c.action == a for c in mine)} to {a}" for a in _actions(mine))
            sections.append(
                Section(
                    kind,
                    f"{kind}: {counts}",
                    len(mine),
                    (change_entry(c, self.scrub, verbose=self.verbose) for c in mine),
                )
            )
        if self.verbose and plan.noops:
            noops = [[f"  {n.kind}/{n.key}: {n.reason}"] for n in plan.noops]
            sections.append(Section("no-ops", f"no-ops: {len(noops)}", len(noops), noops))
        return self.document(head, sections)

    def _policies(self, plan: Plan, verdicts: Verdicts) -> list[str]:
        """The verdicts above the changes: blocking and mandatory ones as a caution,
        advisory ones as a warning, each at its address and field."""
        lines = [f"**{headline(verdicts)}**", ""]
        for level in reversed(LEVELS):
            alert = "WARNING" if level == "advisory" else "CAUTION"
            found = verdicts.at(level)
            if not found:
                continue
            lines.append(f"> [!{alert}]")
            for v in found[:SHOWN_VIOLATIONS]:
                head, *detail = (short(line) for line in violation_lines(plan, v, verdicts))
                # names, values and messages come from the files: in code spans
                lines.append(f"> - **{code(self.scrub(head))}**")
                lines += [f">   {code(self.scrub(d))}" for d in detail[:-1]]
                lines.append(f">   {html(detail[-1])}")
            if len(found) > SHOWN_VIOLATIONS:
                more = counted(len(found) - SHOWN_VIOLATIONS, f"more {level} violation")
                lines.append(f"> - **{more}**: to see all of them, {self.whole}")
            lines.append("")
        if verdicts.ruleChanges is not None:
            head, *changes = rule_change_lines(verdicts.ruleChanges)
            lines += ["#### Policy changes", "", html(head), ""]
            lines += [f"- {code(short(line.strip()))}" for line in changes[:SHOWN_VIOLATIONS]]
            if len(changes) > SHOWN_VIOLATIONS:
                lines.append(f"- {len(changes) - SHOWN_VIOLATIONS} more: {self.whole}")
            lines.append("")
        return lines

    def _where(self, plan: Plan) -> str:
        return (
            f"Organization {code(plan.organizationName)} ({code(plan.organizationId)}) "
            f"on {code(plan.endpoint)}."
        )

    # -- apply report ----------------------------------------------------------
    def report(self, report: ApplyReport, workspace: str, environment: str | None = None) -> str:
        head = [marker("apply", workspace, environment), ""]
        failed = [r for r in report.results if r.status == "failed"]
        head += alerts(
            "CAUTION", [f"{code(r.change.id)}: {self.scrub(r.error or 'failed')}" for r in failed]
        )
        head += [title("apply", workspace, environment), ""]
        in_place = report.count("already in place")
        head += [f"**{report_counts(report)}**", ""]
        head += [f"- {html(self.scrub(line))}" for line in override_lines(report.overrides)]
        head += [""] if report.overrides else []
        statuses = ["succeeded", *(["already in place"] if in_place else []), "failed"]
        statuses.append("not attempted")
        kinds = list(dict.fromkeys(r.change.kind for r in report.results))
        head += count_table(((r.change.kind, r.status) for r in report.results), statuses, statuses)
        sections = []
        for kind in kinds:
            mine = [r for r in report.results if r.change.kind == kind]
            entries = []
            for r in mine:
                entry = change_entry(r.change, self.scrub, r.status, self.verbose)
                if r.error:
                    entry.append(self.scrub(f"!    {r.error}"))
                entries.append(entry)
            done = sum(r.status in ("succeeded", "already in place") for r in mine)
            summary = f"{kind}: {done} of {len(mine)} succeeded"
            sections.append(Section(kind, summary, len(entries), entries))
        return self.document(head, sections)

    # -- drift report ----------------------------------------------------------
    def drift(self, drift: DriftReport) -> str:
        head = [marker("drift", drift.workspace, drift.environment), ""]
        head += alerts("WARNING", [self.scrub(warning_text(w)) for w in drift.warnings])
        head += [title("drift", drift.workspace, drift.environment), ""]
        if not drift.drifted:
            head.append("**No drift.** The service matches the files.")
        else:
            parts = ", ".join(f"{n} {label}" for label, n in drift.counts_by_label().items() if n)
            differ = counted(len(drift.items), "object", "differ")
            head.append(f"**Drift: {differ} from the files** ({parts}).")
        head += [
            "",
            f"Organization {code(drift.organizationName)} ({code(drift.organizationId)}) "
            f"on {code(drift.endpoint)}. In the diffs, `-` is the service and `+` the files "
            "(what `agentform apply` would make it).",
            "",
        ]
        kinds = list(dict.fromkeys(i.kind for i in drift.items))
        pairs = ((i.kind, i.drift) for i in drift.items)
        head += count_table(pairs, list(DRIFT_CLASSES), list(DRIFT_CLASSES.values()))
        sections = []
        for kind in kinds:
            mine = [i for i in drift.items if i.kind == kind]
            entries = []
            for item in mine:
                sign = {"missing": "+", "changed": "~"}.get(item.drift, "-")
                lines = [f"{sign} {item.id}: {DRIFT_CLASSES[item.drift]} ({item.reason})"]
                for fc in item.fields:
                    lines += diff_lines(fc)
                if item.drift != "changed":
                    lines += object_lines(sign, item.object, verbose=self.verbose)
                entries.append([self.scrub(line) for line in lines])
            sections.append(Section(kind, f"{kind}: {len(mine)} drifted", len(entries), entries))
        return self.document(head, sections, "drifted object")

    # -- an error instead of a document ---------------------------------------
    def error(
        self, what: str, workspace: str, messages: list[str], environment: str | None = None
    ) -> str:
        lines = [marker(what, workspace, environment), ""]
        lines += alerts("CAUTION", [code(self.scrub(m)) for m in messages])
        lines += [title(what, workspace, environment), ""]
        lines.append(f"**The {what} failed**; nothing was changed.")
        return "\n".join(lines) + "\n"

    # -- assembly with the size cap -------------------------------------------
    def document(self, head: list[str], sections: list[Section], noun: str = "change") -> str:
        """`head`, then each section as a `<details>` block, cut to the size cap."""
        return capped(head, sections, self.limit, self.whole, noun)
