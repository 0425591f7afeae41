"""What a test run found: one result per test, and the step that failed it.

Values only: the views (testing/report.py) render them; the runner never prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentform.core.errors import AgentformError

Outcome = Literal["passed", "failed", "error", "skipped"]


class StepFailed(AgentformError):
    """An expectation did not hold (or the apply failed): the test fails with `message`."""


class StepError(AgentformError):
    """A step could not be carried out (the service refused an execute, say)."""


@dataclass(frozen=True)
class CaseResult:
    file: str  # as shown: relative to the workspace
    name: str
    outcome: Outcome
    seconds: float = 0.0
    where: str = ""  # file:line of the failing step (or of the test)
    step: str = ""  # the failing step, in a few words: "expect deliveries"
    message: str = ""
    page: str = ""  # its page, with `--html DIR`: DIR/NAME.html

    @property
    def title(self) -> str:
        return f"{self.file}: {self.name}"


@dataclass
class RunResult:
    cases: list[CaseResult] = field(default_factory=list)
    index: str = ""  # with `--html DIR`: DIR/index.html, which lists every test's page

    def count(self, outcome: Outcome) -> int:
        return sum(c.outcome == outcome for c in self.cases)

    @property
    def ok(self) -> bool:
        return all(c.outcome in ("passed", "skipped") for c in self.cases)

    @property
    def summary(self) -> str:
        """`N passed, N failed` (errors count as failures), `, N skipped` when any."""
        failed = self.count("failed") + self.count("error")
        line = f"{self.count('passed')} passed, {failed} failed"
        skipped = self.count("skipped")
        return line + (f", {skipped} skipped" if skipped else "")
