"""On a pull request, after every pair's job (pr_pair.py) has finished: the one
sticky comment of the pull request, written by this single job (matrix jobs cannot
edit one comment safely at once). It gathers the pairs' results (the artifacts
agentform-plan-SLUG, downloaded into $AGENTFORM_OUT/SLUG/) for the pairs matrix.py
listed ($AGENTFORM_OUT/affected.json), and writes a summary table (pair, creates,
updates, deletes, tests, policies) and a collapsible section per pair, each
starting with the pair's own marker.

GitHub refuses a comment over 65,536 characters: the sections that do not fit are
left out of the comment, which says so; the whole text is in the job summary and in
$AGENTFORM_OUT/comment.md (the artifact agentform-comment). No pair affected: one
line saying so.

Environment: PR_NUMBER, GITHUB_*. Exit 0 when the comment was posted (the pairs'
own jobs fail the check), 1 when it could not be.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from github import GitHub, GitHubError, fail
from pipeline import OUT, Pair, marker, summary, write_out

LIMIT = 65_536  # GitHub's limit of a comment's body, in characters
MARKER = marker("pull-request")
NOTHING = (
    "agentform: this pull request affects no workspace x environment pair; nothing to plan or test."
)


def read(pair: Pair, name: str) -> str:
    path = OUT / pair.slug / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def without_marker(markdown: str) -> str:
    return markdown.split("\n", 1)[-1] if markdown.startswith("<!-- agentform:") else markdown


def policies_cell(plan: dict[str, Any]) -> str:
    levels = [str(v.get("level")) for v in plan.get("violations") or []]
    if not levels:
        return "✅"
    counted = {level: levels.count(level) for level in dict.fromkeys(levels)}
    sign = "❌" if {"mandatory", "blocking"} & set(counted) else "⚠️"
    return sign + " " + ", ".join(f"{n} {level}" for level, n in counted.items())


def row(pair: Pair, result: dict[str, Any] | None) -> str:
    name = f"`{pair.workspace}` {pair.environment or ''}".strip()
    if result is None:
        return f"| {name} | | | | ❌ no result: its job failed, see the run | |"
    tests = result.get("tests") or {}
    test_cell = ("✅ " if tests.get("ok") else "❌ ") + str(tests.get("line") or "")
    plan = result.get("plan")
    if plan is None:
        return f"| {name} | tests only | | | {test_cell} | |"
    if plan.get("error"):
        return f"| {name} | ❌ {plan['error']} | | | {test_cell} | |"
    counts = plan.get("summary") or {}
    changed = [str(counts.get(k, 0)) for k in ("create", "update", "delete")]
    return f"| {name} | {' | '.join(changed)} | {test_cell} | {policies_cell(plan)} |"


def section(pair: Pair, result: dict[str, Any] | None) -> str:
    body = without_marker(read(pair, "plan.md")).strip()
    tests = without_marker(read(pair, "test.md")).strip()
    text = marker("plan", pair) + f"\n<details><summary>{pair}</summary>\n\n"
    text += (body or "_No plan: tests only, or the plan did not run._") + "\n\n"
    return text + (tests + "\n\n" if tests else "") + "</details>\n"


def comment(pairs: list[Pair]) -> tuple[str, str]:
    """(the comment, the whole text for the summary and the artifact)."""
    if not pairs:
        return f"{MARKER}\n{NOTHING}\n", f"{MARKER}\n{NOTHING}\n"
    results = {p: load(p) for p in pairs}
    head = f"{MARKER}\n### agentform: {len(pairs)} workspace x environment pair(s) affected\n\n"
    head += "| pair | creates | updates | deletes | tests | policies |\n|---|---|---|---|---|---|\n"
    head += "".join(row(p, results[p]) + "\n" for p in pairs) + "\n"
    sections = [section(p, results[p]) for p in pairs]
    whole = head + "\n".join(sections)
    if len(whole) <= LIMIT:
        return whole, whole
    shown, left = head, []
    note = (
        "\n> [!NOTE]\n> The sections of {} did not fit in this comment (GitHub's limit is "
        "65,536 characters): they are in the run's job summary and its artifact "
        "`agentform-comment` (comment.md).\n"
    )
    room = LIMIT - len(note.format(", ".join(str(p) for p in pairs)))
    for pair, text in zip(pairs, sections, strict=True):
        if not left and len(shown) + len(text) + 1 <= room:
            shown += text + "\n"
        else:
            left.append(str(pair))
    return shown + note.format(", ".join(left)), whole


def load(pair: Pair) -> dict[str, Any] | None:
    text = read(pair, "result.json")
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def main() -> int:
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
    listed = OUT / "affected.json"
    if not listed.exists():
        return fail("the affected pairs are not known: the affected job failed", number, MARKER)
    rows = json.loads(listed.read_text(encoding="utf-8"))
    pairs = [Pair(str(r["workspace"]), r.get("environment")) for r in rows]
    body, whole = comment(pairs)
    write_out(OUT / "comment.md", whole)
    summary(whole)
    if number is not None:
        try:
            GitHub().upsert_comment(number, body)
        except GitHubError as exc:
            return fail(str(exc), None, "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
