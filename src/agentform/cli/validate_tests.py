"""The test files `agentform validate` checks with the workspace: those `agentform
test` would run (tests/*.yaml), read and checked as it reads them before running
any, so a test file a pull request breaks fails the first, offline step of its job.

The checks (agentform.testing.files) are imported only for a workspace that has a
tests/ directory: they need the seed's format and the test format, never the
service a test runs on, so validate stays as light as the files it reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentform.config.files import TESTS_DIR
from agentform.config.loader import Workspace
from agentform.core.diagnostics import Diagnostic
from agentform.core.errors import DiagnosticsError


@dataclass(frozen=True)
class Tested:
    """What the check found: how many files and tests are valid, and the problems."""

    files: int = 0
    tests: int = 0
    problems: list[Diagnostic] = field(default_factory=list)


class TestFiles:
    """The test files of the workspace at `root`: found once (tests/ walked, each file
    opened to tell a seed), then checked against each environment's workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[Path] | None = None
        self.refused: list[Diagnostic] = []  # tests/ itself leads out: nothing is read

    def checked(self, workspace: Workspace | None) -> Tested:
        """The files checked against `workspace` (None: it did not load, so the
        names it declares are not checked)."""
        if not (self.root / TESTS_DIR).is_dir():
            return Tested()
        from agentform.testing.files import tests_of, workspace_tests  # only where tests are

        if self.paths is None and not self.refused:
            try:
                self.paths = tests_of(self.root)
            except DiagnosticsError as exc:
                self.refused = list(exc.diagnostics)
        if self.paths is None:
            return Tested(problems=self.refused)
        runs, problems = workspace_tests(self.root, workspace, self.paths)
        return Tested(len(runs), sum(len(r.model.tests) for r in runs), problems)
