"""The views of a test run: text (as results come), JUnit XML, markdown, JSON.

Every view is given the run's `scrub` (the workspace's secrets masked), so a
value that found its way into a message is never shown. Markdown is for a pull
request comment: the summary first, only failures in detail, at most the
65,536 characters GitHub allows.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from urllib.parse import quote

from agentform.output.markdown_blocks import marker
from agentform.testing.results import CaseResult, RunResult

GITHUB_LIMIT = 65_536
FORMAT_VERSION = 1
Scrub = Callable[[str], str]
MARKS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def text_line(case: CaseResult, scrub: Scrub) -> str:
    """One result as it comes, with the failing step's explanation below it."""
    timing = f" ({case.seconds:.2f} s)" if case.outcome != "skipped" else f" ({case.message})"
    line = f"{MARKS[case.outcome]} {case.title}{timing}"
    if case.outcome in ("failed", "error"):
        line += f"\n  {case.where}: {case.step}\n" + _indented(case.message, "    ")
    return scrub(line)


def _indented(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def junit(result: RunResult, scrub: Scrub) -> str:
    """JUnit XML, one testsuite per file (GitHub and GitLab render it)."""
    suites = ET.Element("testsuites", name="agentform test", tests=str(len(result.cases)))
    for file, group in groupby(result.cases, key=lambda c: c.file):
        cases = list(group)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=file,
            tests=str(len(cases)),
            failures=str(sum(c.outcome == "failed" for c in cases)),
            errors=str(sum(c.outcome == "error" for c in cases)),
            skipped=str(sum(c.outcome == "skipped" for c in cases)),
            time=f"{sum(c.seconds for c in cases):.3f}",
        )
        for case in cases:
            element = ET.SubElement(
                suite, "testcase", classname=file, name=case.name, time=f"{case.seconds:.3f}"
            )
            if case.page:  # `--html`: the test's page (the attachment form CI tools read)
                properties = ET.SubElement(element, "properties")
                ET.SubElement(properties, "property", name="html", value=case.page)
            if case.outcome in ("failed", "error"):
                tag = "failure" if case.outcome == "failed" else "error"
                first = case.message.splitlines()[0] if case.message else case.step
                detail = ET.SubElement(element, tag, message=scrub(first), type=case.step)
                detail.text = scrub(f"{case.where}: {case.step}\n{case.message}")
            elif case.outcome == "skipped":
                ET.SubElement(element, "skipped", message=scrub(case.message))
            if case.page:
                ET.SubElement(element, "system-out").text = f"[[ATTACHMENT|{case.page}]]"
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def markdown(
    result: RunResult, scrub: Scrub, workspace: str, limit: int = GITHUB_LIMIT, what: str = "test"
) -> str:
    """The marker a pipeline finds its comment by, the summary, then each failure with
    its step and explanation, within `limit`. `what`: the command (`policy test`)."""
    icon = "✅" if result.ok else "❌"
    mark = marker(what.replace(" ", "-"), workspace)
    head = f"{mark}\n\n### {icon} agentform {what}: {result.summary}\n"
    if result.index:
        head += f"\nEvery test's page: [{result.index}]({quote(result.index)})\n"
    parts = [head]
    failing = [c for c in result.cases if c.outcome in ("failed", "error")]
    for case in failing:
        body = case.message.replace("```", "`\u200b``")
        head = f"\n**{MARKS[case.outcome]}** `{case.title}`\n\n`{case.where}`: {case.step}\n"
        if case.page:
            head += f"\nIts page: [{case.page}]({quote(case.page)})\n"
        parts.append(f"{head}\n```text\n{body}\n```\n")
    text = scrub("".join(parts))
    if len(text) <= limit:
        return text
    note = f"\n… cut to {limit:,} characters: run `agentform test` to see every failure.\n"
    cut = text[: limit - len(note) - 8]
    if cut.count("```") % 2:
        cut += "\n```"
    return cut + note


def json_report(result: RunResult, scrub: Scrub) -> str:
    doc = {
        "formatVersion": FORMAT_VERSION,
        "summary": {
            "passed": result.count("passed"),
            "failed": result.count("failed"),
            "errors": result.count("error"),
            "skipped": result.count("skipped"),
            "ok": result.ok,
        },
        "tests": [
            {
                "file": c.file,
                "name": c.name,
                "outcome": c.outcome,
                "seconds": round(c.seconds, 3),
                "where": c.where,
                "step": c.step,
                "message": c.message,
                **({"page": c.page} if c.page else {}),
            }
            for c in result.cases
        ],
    }
    return scrub(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


@dataclass(frozen=True)
class Tested:
    """`agentform test`'s document (or `policy test`'s) in each of its formats, scrubbed."""

    result: RunResult
    scrub: Scrub
    workspace: str
    what: str = "test"  # the command, in markdown's title and marker

    def text(self, view: object) -> str:
        return self.result.summary + "\n"

    def junit(self, view: object) -> str:
        return junit(self.result, self.scrub)

    def markdown(self, view: object) -> str:
        return markdown(self.result, self.scrub, self.workspace, what=self.what)

    def json(self, view: object) -> str:
        return json_report(self.result, self.scrub)
