"""Nightly, one job per pair of the repository (matrix.py all): `agentform drift
--format markdown` with the environment's read-only key. While the service differs
from the files, one issue per pair (labelled, found by the pair's marker) holds the
latest report; when that pair's drift is gone, its issue is closed with a note.

Usage: drift.py WORKSPACE [ENVIRONMENT]. Exit 0 when the check ran (drifted or not;
the issue is the signal), 1 when it failed (a missing key or secret: one line naming
it). Environment: AGENTFORM_READ_API_KEY, the secret() variables of settings.toml,
DRIFT_LABEL (default agentform-drift), GITHUB_*.
"""

from __future__ import annotations

import os
import sys

from github import GitHub, GitHubError, fail
from pipeline import (
    READ_KEY,
    Missing,
    Pair,
    agentform,
    environment,
    marker,
    output,
    summary,
    write_out,
)

LABEL = os.environ.get("DRIFT_LABEL", "agentform-drift")


def main(args: list[str]) -> int:
    pair = Pair.of(args)
    try:
        env = environment(pair, READ_KEY)
    except Missing as exc:
        return fail(f"agentform did not check {pair} for drift: {exc}", None, "")
    drift = agentform(pair, "drift", "--format", "markdown", env=env)
    write_out(pair.out() / "drift.md", drift.stdout)
    summary(drift.stdout)
    if drift.returncode not in (0, 2):
        return 1
    output("drifted", "true" if drift.returncode == 2 else "false")
    try:
        report(pair, drift.returncode, drift.stdout)
    except GitHubError as exc:
        return fail(str(exc), None, "")
    return 0


def report(pair: Pair, returncode: int, markdown: str) -> None:
    github = GitHub()
    own = marker("drift", pair)  # agentform's marker names the workspace, not the pair
    if returncode == 2:
        body = (
            own + "\n" + (markdown.split("\n", 1)[-1] if markdown.startswith("<!--") else markdown)
        )
        number = github.open_or_update_issue(f"Drift in agentform {pair}", body, LABEL)
        print(f"drift of {pair} reported in issue #{number}", file=sys.stderr)
    else:
        closed = github.close_issue(own, LABEL, f"No drift any more: {pair} matches the files.")
        if closed:
            print(f"drift of {pair} is gone: closed issue #{closed}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
