"""On a push to main: apply the reviewed plan of the merged pull request (the
`agentform-plan-<PR>` artifact of its plan workflow), or plan and apply at once where
no saved plan exists. A stale saved plan is refused by agentform before any write:
the job fails with the reason, in the log, the job summary and on the pull request.

Exit: agentform's (0 applied, 1 refused or failed). Environment: GITHUB_SHA, GITHUB_*.
"""

from __future__ import annotations

import os
import sys

from github import GitHub
from pipeline import agentform, summary, write_out


def main() -> int:
    github = GitHub() if os.environ.get("GITHUB_TOKEN") else None
    sha = os.environ.get("GITHUB_SHA")
    number = github.merged_pull_request(sha) if github and sha else None
    reviewed = None
    if github and number is not None:
        reviewed = github.download_artifact(f"agentform-plan-{number}", "plan.json")
    if reviewed is not None:
        path = write_out("reviewed-plan.json", reviewed.decode())
        print(f"applying the plan reviewed in pull request #{number}", file=sys.stderr)
        result = agentform("apply", str(path), "--format", "markdown")
    else:
        print("no reviewed plan was saved: planning and applying now", file=sys.stderr)
        result = agentform("apply", "--auto-approve", "--format", "markdown")
    write_out("apply.md", result.stdout)
    summary(result.stdout)
    if github and number is not None and result.stdout:
        github.upsert_comment(number, result.stdout)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
