"""On a pull request: `agentform test`, the workspace's tests (workspace/tests/*.yaml),
each on a fresh embedded service. It needs no key and no secret (a test never calls
the real service; an unset secret stands in as `test-NAME`). Writes
$AGENTFORM_OUT/test-results.xml (JUnit, for the workflow to upload) and
$AGENTFORM_OUT/test.md, and posts or updates one sticky comment with the markdown
summary (failures in detail).

Exit: agentform's (0 every test passed, 1 one failed or the tests could not run).
"""

from __future__ import annotations

import os
import sys

from github import GitHub, GitHubError, fail
from pipeline import OUT, agentform, environment, error, marker, summary, write_out


def main() -> int:
    number = int(os.environ["PR_NUMBER"]) if os.environ.get("PR_NUMBER") else None
    OUT.mkdir(parents=True, exist_ok=True)
    result = agentform(
        "test",
        "--format",
        "markdown",
        "--junit-xml",
        str(OUT / "test-results.xml"),
        env=environment(None, secrets=False),
    )
    markdown = result.stdout
    if not markdown:  # the tests could not run (a broken test file): agentform said why
        error("agentform test did not run; its log says why")
        return fail("agentform test did not run: see the job's log", number, marker("test"))
    write_out("test.md", markdown)
    summary(markdown)
    if number is not None:
        try:
            comment = GitHub().upsert_comment(number, markdown)
        except GitHubError as exc:
            return fail(str(exc), None, "")
        print(f"test results posted as comment {comment}", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
