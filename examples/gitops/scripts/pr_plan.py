"""On a pull request (after the workflow's `agentform validate` step): plan with
--out, post or update one sticky comment with the markdown plan (found by its
marker). The saved plan is left in $AGENTFORM_OUT/plan.json for the workflow to
upload as an artifact.

Exit 0 when the plan was made (with or without changes), 1 when it failed (the
comment then says why). Environment: PR_NUMBER, and GITHUB_* for the comment.
"""

from __future__ import annotations

import os
import sys

from github import GitHub
from pipeline import OUT, agentform, output, summary, write_out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    plan = agentform(
        "plan", "--format", "markdown", "--out", str(OUT / "plan.json"), "--detailed-exitcode"
    )
    markdown = plan.stdout
    write_out("plan.md", markdown)
    summary(markdown)
    output("changes", "true" if plan.returncode == 2 else "false")
    if markdown and os.environ.get("PR_NUMBER"):
        comment = GitHub().upsert_comment(int(os.environ["PR_NUMBER"]), markdown)
        print(f"plan posted as comment {comment}", file=sys.stderr)
    return 1 if plan.returncode not in (0, 2) else 0


if __name__ == "__main__":
    sys.exit(main())
