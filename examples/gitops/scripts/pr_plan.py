"""On a pull request (after validate.py): plan with the read-only key and --out,
post or update one sticky comment with the markdown plan (found by its marker). The
saved plan is left in $AGENTFORM_OUT/plan.json for the workflow to upload as an
artifact; the apply workflow compares it with its own plan after the merge.

With `environments` in settings.toml: a plan per environment (its read key
AGENTFORM_READ_API_KEY_NAME, saved as plan-NAME.json), all in one comment with a
section each, followed by `agentform env diff` of each environment and the next
(offline): whether prod gets the same changes as staging, or exactly where not.

Exit 0 when the plan was made (with or without changes), 1 when it failed (the
comment then says why). Environment: PR_NUMBER, AGENTFORM_READ_API_KEY, the
secret() variables of settings.toml, and GITHUB_* for the comment.
"""

from __future__ import annotations

import itertools
import os
import sys

from github import GitHub, GitHubError, fail
from pipeline import (
    ENVIRONMENTS,
    READ_KEY,
    Missing,
    agentform,
    environment,
    marker,
    output,
    plan_markdown,
    read_key_of,
    summary,
    write_out,
)

LIMIT = 65_536  # GitHub's comment limit: agentform's markdown keeps each document under it


def without_marker(markdown: str) -> str:
    return markdown.split("\n", 1)[-1] if markdown.startswith("<!-- agentform:") else markdown


def head_only(markdown: str, name: str) -> str:
    """A plan's summary without its per-kind sections, when the comment would be too long."""
    head = markdown.split("<details>", 1)[0]
    return head + f"_The changes of {name} are in the run's artifact (plan-{name}.md)._\n"


def plan_environments(number: int | None) -> int:
    """One plan per environment, one comment: a section each, then the env diffs."""
    sections: list[tuple[str, str]] = []
    failed = changes = False
    for name in ENVIRONMENTS:
        try:
            env = environment(read_key_of(name), env_name=name)
        except Missing as exc:
            sections.append((name, f"> [!CAUTION]\n> agentform did not plan {name}: {exc}\n"))
            failed = True
            continue
        plan = plan_markdown(env, name)
        failed |= plan.returncode not in (0, 2)
        changes |= plan.returncode == 2
        sections.append((name, without_marker(plan.stdout)))
    offline = environment(None, secrets=False)
    for first, second in itertools.pairwise(ENVIRONMENTS):
        diff = agentform("env", "diff", first, second, "--format", "markdown", env=offline)
        sections.append((f"{first} → {second}", without_marker(diff.stdout)))
    body = marker("plan") + "\n" + "\n---\n\n".join(text for _, text in sections)
    if len(body) > LIMIT:
        shown = [head_only(t, n) if n in ENVIRONMENTS else t for n, t in sections]
        body = marker("plan") + "\n" + "\n---\n\n".join(shown)
    write_out("plan.md", body)
    summary(body)
    output("changes", "true" if changes else "false")
    if number is not None:
        try:
            GitHub().upsert_comment(number, body[:LIMIT])
        except GitHubError as exc:
            return fail(str(exc), None, "")
    return 1 if failed else 0


def main() -> int:
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
    if ENVIRONMENTS:
        return plan_environments(number)
    try:
        env = environment(READ_KEY)
    except Missing as exc:
        return fail(f"agentform did not plan: {exc}", number, marker("plan"))
    plan = plan_markdown(env)
    markdown = plan.stdout
    summary(markdown)
    output("changes", "true" if plan.returncode == 2 else "false")
    if markdown and number is not None:
        try:
            comment = GitHub().upsert_comment(number, markdown)
        except GitHubError as exc:
            return fail(str(exc), None, "")
        print(f"plan posted as comment {comment}", file=sys.stderr)
    return 1 if plan.returncode not in (0, 2) else 0


if __name__ == "__main__":
    sys.exit(main())
