"""The markdown view: a plan, an apply report or a drift report as GitHub-flavoured
markdown for a pull-request comment or an issue.

Layout: a stable HTML comment marker naming the workspace (a pipeline finds and
updates its own comment by it), warnings and errors, a summary line and a table of
counts per kind, then one collapsible `<details>` section per kind holding a `diff`
block. A document longer than `limit` characters (GitHub's comment limit) is cut
between two changes, never inside one, every open block is closed, and a last line
says what was left out and where the whole of it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from agentform.core.words import counted
from agentform.engine.drift import DRIFT_CLASSES, DriftReport
from agentform.engine.model import Change, Plan
from agentform.engine.verdicts import LEVELS, Verdicts
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

GITHUB_LIMIT = 65_536
SIGNS = {"create": "+", "update": "~", "rename": "~", "replace": "~", "delete": "-", "cancel": "-"}
ACTIONS = ("create", "update", "rename", "replace", "delete", "cancel")
NOTE_ROOM = 600  # kept free for the line saying what was cut
SHOWN_VIOLATIONS = 20  # of each level, above the changes; the rest are counted
SHOWN_CHARS = 500  # of a line of a violation


def _short(line: str) -> str:
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


def marker(what: str, workspace: str, environment: str | None = None) -> str:
    """`<!-- agentform:plan workspace=NAME -->` (and ` environment=NAME` when there is
    one): what a pipeline searches its comments for."""
    env = f" environment={quote(environment, safe='._-')}" if environment else ""
    return f"<!-- agentform:{what} workspace={quote(workspace, safe='._-')}{env} -->"


def title(what: str, workspace: str, environment: str | None = None) -> str:
    """`### agentform plan: workspace `shop`, environment `prod``."""
    env = f", environment {code(environment)}" if environment else ""
    return f"### agentform {what}: workspace {code(workspace)}{env}"


def code(text: str) -> str:
    """An inline code span that holds any text (backticks included)."""
    text = text.replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cell(text: str) -> str:
    """Text for a table cell: GitHub ends a cell at any `|`, even one inside a code
    span, unless it is escaped."""
    return text.replace("|", "\\|")


@dataclass
class Section:
    """One `<details>` block: a summary and `count` entries (each the lines of one
    change), made only as far as they are shown."""

    kind: str
    summary: str
    count: int
    entries: Iterable[list[str]]


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", *["---:"] * (len(header) - 1)]) + "|",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def _counts(pairs: Iterable[tuple[str, str]], columns: list[str], headers: list[str]) -> list[str]:
    """A table of how many (kind, column) pairs there are, a row per kind in order
    of first appearance; nothing when there are none."""
    counted = Counter(pairs)
    kinds = list(dict.fromkeys(kind for kind, _ in counted))
    if not kinds:
        return []
    rows = [[code(k), *(str(counted[(k, c)]) for c in columns)] for k in kinds]
    return [*_table(["kind", *headers], rows), ""]


def _alerts(kind: str, messages: list[str]) -> list[str]:
    if not messages:
        return []
    lines = [f"> [!{kind}]"]
    lines += [f"> - {m}" for m in messages]
    return [*lines, ""]


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
        head += _alerts("WARNING", [self.scrub(warning_text(w)) for w in plan.warnings])
        head += [title("plan", plan.workspace, plan.environment), ""]
        bold, rest = plan_summary(plan)
        head.append(f"**{bold}**{rest}")
        head += ["", self._where(plan), ""]
        if plan.policies is not None:
            head += self._policies(plan, plan.policies)
        actions = _actions(plan.changes)
        kinds = list(dict.fromkeys(c.kind for c in plan.changes))
        head += _counts(((c.kind, c.action) for c in plan.changes), actions, actions)
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
        return self._document(head, sections)

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
                head, *detail = (_short(line) for line in violation_lines(plan, v, verdicts))
                # names, values and messages come from the files: in code spans
                lines.append(f"> - **{code(self.scrub(head))}**")
                lines += [f">   {code(self.scrub(d))}" for d in detail[:-1]]
                lines.append(f">   {_html(detail[-1])}")
            if len(found) > SHOWN_VIOLATIONS:
                more = counted(len(found) - SHOWN_VIOLATIONS, f"more {level} violation")
                lines.append(f"> - **{more}**: to see all of them, {self.whole}")
            lines.append("")
        if verdicts.ruleChanges is not None:
            head, *changes = rule_change_lines(verdicts.ruleChanges)
            lines += ["#### Policy changes", "", _html(head), ""]
            lines += [f"- {code(_short(line.strip()))}" for line in changes[:SHOWN_VIOLATIONS]]
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
        head += _alerts(
            "CAUTION", [f"{code(r.change.id)}: {self.scrub(r.error or 'failed')}" for r in failed]
        )
        head += [title("apply", workspace, environment), ""]
        in_place = report.count("already in place")
        head += [f"**{report_counts(report)}**", ""]
        head += [f"- {_html(self.scrub(line))}" for line in override_lines(report.overrides)]
        head += [""] if report.overrides else []
        statuses = ["succeeded", *(["already in place"] if in_place else []), "failed"]
        statuses.append("not attempted")
        kinds = list(dict.fromkeys(r.change.kind for r in report.results))
        head += _counts(((r.change.kind, r.status) for r in report.results), statuses, statuses)
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
        return self._document(head, sections)

    # -- drift report ----------------------------------------------------------
    def drift(self, drift: DriftReport) -> str:
        head = [marker("drift", drift.workspace, drift.environment), ""]
        head += _alerts("WARNING", [self.scrub(warning_text(w)) for w in drift.warnings])
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
        head += _counts(pairs, list(DRIFT_CLASSES), list(DRIFT_CLASSES.values()))
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
        return self._document(head, sections, "drifted object")

    # -- an error instead of a document ---------------------------------------
    def error(
        self, what: str, workspace: str, messages: list[str], environment: str | None = None
    ) -> str:
        lines = [marker(what, workspace, environment), ""]
        lines += _alerts("CAUTION", [code(self.scrub(m)) for m in messages])
        lines += [title(what, workspace, environment), ""]
        lines.append(f"**The {what} failed**; nothing was changed.")
        return "\n".join(lines) + "\n"

    # -- assembly with the size cap -------------------------------------------
    def document(self, head: list[str], sections: list[Section], noun: str = "change") -> str:
        """`head`, then each section as a `<details>` block, cut to the size cap."""
        return self._document(head, sections, noun)

    def _document(self, head: list[str], sections: list[Section], noun: str = "change") -> str:
        out = "\n".join(head) + "\n"
        budget = None if self.limit is None else self.limit - NOTE_ROOM
        size = len(out)
        left_out: dict[str, int] = {}
        for section in sections:
            if left_out:
                left_out[section.kind] = section.count
                continue
            opening = f"<details><summary>{_html(section.summary)}</summary>\n\n"
            size += len(opening) + len("```diff\n```\n\n</details>\n\n")
            body: list[str] = []
            for entry in section.entries:
                text = "\n".join(entry) + "\n"
                if budget is not None and size + len(text) > budget:
                    break
                body.append(text)
                size += len(text)
            if len(body) < section.count:
                left_out[section.kind] = section.count - len(body)
            if body:
                fence = _fence(body)
                out += f"{opening}{fence}diff\n{''.join(body)}{fence}\n\n</details>\n\n"
        if left_out:
            total = sum(left_out.values())
            detail = ", ".join(f"{kind}: {n}" for kind, n in left_out.items())
            out += (
                f"**{counted(total, f'more {noun}', 'were left out')}** ({detail}): "
                f"this text is limited to "
                f"{self.limit:,} characters. To see all of it, {self.whole}.\n"
            )
        return out


def _fence(texts: list[str]) -> str:
    longest = max((len(m) for text in texts for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
