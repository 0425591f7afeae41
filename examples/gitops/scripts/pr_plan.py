"""On a pull request (after validate.py): plan with the read-only key and --out,
post or update one sticky comment with the markdown plan (found by its marker). The
saved plan is left in $AGENTFORM_OUT/plan.json for the workflow to upload as an
artifact; the apply workflow compares it with its own plan after the merge.

Exit 0 when the plan was made (with or without changes), 1 when it failed (the
comment then says why). Environment: PR_NUMBER, AGENTFORM_READ_API_KEY, the
secret() variables of settings.toml, and GITHUB_* for the comment.
"""

from __future__ import annotations

import os
import sys

from github import GitHub, GitHubError, fail
from pipeline import (
    READ_KEY,
    Missing,
    environment,
    marker,
    output,
    plan_markdown,
    summary,
)


def main() -> int:
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
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
