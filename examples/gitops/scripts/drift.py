"""Nightly: `agentform drift --format markdown`. While the service differs from the
files, one issue (labelled, found by its marker) holds the latest report; when the
drift is gone, that issue is closed with a note.

Exit 0 when the check ran (drifted or not; the issue is the signal), 1 when it
failed (a missing key or secret: one line naming it). Environment:
AGENTFORM_READ_API_KEY (drift only reads), the secret() variables of settings.toml,
DRIFT_LABEL (default agentform-drift), GITHUB_*.
"""

from __future__ import annotations

import os
import sys

from github import GitHub, GitHubError, fail, first_line
from pipeline import (
    READ_KEY,
    Missing,
    agentform,
    environment,
    output,
    summary,
    workspace_of,
    write_out,
)

LABEL = os.environ.get("DRIFT_LABEL", "agentform-drift")


def main() -> int:
    try:
        env = environment(READ_KEY)
    except Missing as exc:
        return fail(f"agentform did not check for drift: {exc}", None, "")
    drift = agentform("drift", "--format", "markdown", env=env)
    write_out("drift.md", drift.stdout)
    summary(drift.stdout)
    if drift.returncode not in (0, 2):
        return 1
    marker = first_line(drift.stdout)
    output("drifted", "true" if drift.returncode == 2 else "false")
    try:
        report(drift.returncode, drift.stdout, marker)
    except GitHubError as exc:
        return fail(str(exc), None, "")
    return 0


def report(returncode: int, markdown: str, marker: str) -> None:
    github = GitHub()
    if returncode == 2:
        title = f"Drift in agentform workspace {workspace_of(marker)}"
        number = github.open_or_update_issue(title, markdown, LABEL)
        print(f"drift reported in issue #{number}", file=sys.stderr)
    else:
        closed = github.close_issue(
            marker, LABEL, "No drift any more: the service matches the files."
        )
        if closed:
            print(f"drift is gone: closed issue #{closed}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
