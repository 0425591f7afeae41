"""The views of `agentform env`: the environments listed (text, JSON), and `env
diff` as text for a terminal, markdown for a pull request (within the comment size
cap the plan's markdown keeps), JSON for programs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentform.core.words import counted
from agentform.engine.env_diff import FORMAT_VERSION, EnvDiff, FieldDifference, ObjectDifference
from agentform.output.markdown import MarkdownView
from agentform.output.markdown_blocks import cell, code, marker
from agentform.output.markdown_document import Section
from agentform.output.view import View

SHOWN_CHARS = 200  # a value longer than this is cut, unless -v
WHY = {
    "vars": "differs by the environments' variables",
    "name": "differs by the environment's name (env_name in a template)",
}


def _value(v: Any, verbose: bool) -> str:
    text = "(absent)" if v is None else json.dumps(v, ensure_ascii=False)
    if not verbose and len(text) > SHOWN_CHARS:
        return text[:SHOWN_CHARS] + "…"
    return text


def summary(diff: EnvDiff) -> str:
    """The verdict line every view starts with."""
    by_vars = sum(o.status == "vars" for o in diff.objects)
    head = (
        f"Environments {diff.a} and {diff.b} (workspace {diff.workspace}): "
        f"{counted(diff.same, 'object')} the same, {by_vars} differ by their variables, "
        f"{len(diff.flagged)} by the environment's name."
    )
    if diff.expected:
        return head + f" {diff.b} gets the same changes as {diff.a}."
    return head + f" {diff.b} does not get the same changes as {diff.a}: see those marked !"


def _entry(item: ObjectDifference, a: str, b: str, verbose: bool) -> list[str]:
    sign = "!" if item.status == "name" else "~"
    where = f", only in {item.only_in}" if item.only_in else ""
    lines = [f"{sign} {item.id}: {WHY[item.status]}{where}"]
    for f in item.fields:
        lines.append(f"-     {f.field} ({a}): {_value(f.a, verbose)}")
        lines.append(f"+     {f.field} ({b}): {_value(f.b, verbose)}")
    return lines


def _variables(variables: tuple[FieldDifference, ...], verbose: bool) -> list[str]:
    return [f"  {v.field}: {_value(v.a, verbose)} → {_value(v.b, verbose)}" for v in variables]


def text(diff: EnvDiff, verbose: bool = False) -> str:
    lines = [summary(diff), ""]
    if diff.variables:
        lines += [
            f"Variables that differ ({diff.a} → {diff.b}):",
            *_variables(diff.variables, verbose),
            "",
        ]
    for item in diff.objects:
        lines += ["  " + line for line in _entry(item, diff.a, diff.b, verbose)] + [""]
    return "\n".join(lines) + "\n"


def markdown(diff: EnvDiff, verbose: bool = False) -> str:
    head = [marker("env-diff", diff.workspace), ""]
    head += [f"### agentform env diff: {code(diff.a)} and {code(diff.b)}", ""]
    verdict = summary(diff)
    head += [f"**{verdict}**" if diff.expected else f"> [!WARNING]\n> {verdict}", ""]
    if diff.variables:
        head += ["| variable | " + f"{code(diff.a)} | {code(diff.b)} |", "|---|---|---|"]
        head += [
            "| "
            + " | ".join(
                cell(code(c)) for c in (v.field, _value(v.a, verbose), _value(v.b, verbose))
            )
            + " |"
            for v in diff.variables
        ]
        head.append("")
    sections = []
    for status in ("name", "vars"):
        mine = [o for o in diff.objects if o.status == status]
        if mine:
            entries = (_entry(o, diff.a, diff.b, verbose) for o in mine)
            title = f"{counted(len(mine), 'object')} {WHY[status].removeprefix('differs ')}"
            sections.append(Section(status, title, len(mine), entries))
    view = MarkdownView(whole=f"run `agentform env diff {diff.a} {diff.b}`", verbose=verbose)
    text = view.document(head, sections, "difference")
    assert view.limit is not None and len(text) <= view.limit
    return text


def document(diff: EnvDiff) -> dict[str, Any]:
    return {
        "formatVersion": FORMAT_VERSION,
        "workspace": diff.workspace,
        "environments": [diff.a, diff.b],
        "expected": diff.expected,
        "same": diff.same,
        "variables": [{"name": v.field, "a": v.a, "b": v.b} for v in diff.variables],
        "objects": [
            {
                "id": o.id,
                "kind": o.kind,
                "status": o.status,
                "onlyIn": o.only_in,
                "fields": [{"field": f.field, "a": f.a, "b": f.b} for f in o.fields],
            }
            for o in diff.objects
        ],
    }


def as_json(diff: EnvDiff) -> str:
    return json.dumps(document(diff), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Compared:
    """`env diff`'s document in each view."""

    diff: EnvDiff

    def text(self, view: View) -> str:
        return text(self.diff, view.verbose)

    def markdown(self, view: View) -> str:
        return markdown(self.diff, view.verbose)

    def json(self, view: View) -> str:
        return as_json(self.diff)


@dataclass(frozen=True)
class Environments:
    """`env list`'s document: each environment's endpoint, organization and key
    variable, as agentform.yaml writes them."""

    rows: list[dict[str, Any]]
    root_file: str

    def text(self, view: View) -> str:
        if not self.rows:
            return f"{self.root_file} declares no environments.\n"
        lines = []
        for row in self.rows:
            organization = row["organizationId"] or "(the only one the key reaches)"
            files = f", var files {', '.join(row['varFiles'])}" if row["varFiles"] else ""
            lines.append(
                f"{row['name']}: {row['endpoint']}, organization {organization}, "
                f"key from ${row['apiKeyEnv']}{files}"
            )
        return "\n".join(lines) + "\n"

    def json(self, view: View) -> str:
        return json.dumps({"environments": self.rows}, indent=2, ensure_ascii=False) + "\n"
