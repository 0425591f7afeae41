"""`agentform test --html DIR`: one static page per test, with the console's views.

A page shows the test's outcome (for a failure, the step and its explanation:
the routing decision behind a delivery that did or did not come), its steps
with the executions each started, and each execution as the console shows it:
its timeline with every webhook's routing decision, its deliveries and every
attempt. The page stands alone (the stylesheet inside it, no script, no link
out of it), so a CI artifact opens as it is; the workspace's secrets are
masked in it, as in every report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentform.core.errors import AgentformError
from agentform.service.console.render import static_page
from agentform.service.console.views import execution_view
from agentform.service.store.console_reads import execution_ids
from agentform.testing.results import CaseResult
from agentform.testing.session import TestService


@dataclass
class StepRecord:
    where: str
    what: str
    started: list[tuple[str, str]] = field(default_factory=list)  # (execution id, name)
    failed: bool = False


@dataclass
class TestRecord:
    """What one test did, step by step, as its page shows it."""

    __test__ = False  # not a pytest class

    steps: list[StepRecord] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    org_id: str | None = None
    named: Callable[[str], str] = str  # an id as the test names it (`as:`)

    def after(self, where: str, what: str, service: TestService, org_id: str) -> StepRecord:
        """The step at `where` done: the executions that exist now and did not before."""
        with service.app.state.db.read() as conn:
            now = execution_ids(conn, org_id)
        step = StepRecord(where, what, [(i, i[:8]) for i in now if i not in self.seen])
        self.seen.update(now)
        self.steps.append(step)
        return step


def page_name(case: CaseResult, taken: set[str]) -> str:
    """A file name of the test's file and name, in plain letters, unique in the run."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{case.file}-{case.name}").strip("-").lower()[:100]
    name, n = f"{slug or 'test'}.html", 2
    while name in taken:
        name, n = f"{slug}-{n}.html", n + 1
    taken.add(name)
    return name


class Pages:
    """Writes the run's pages into `directory`; `index.html` lists them."""

    def __init__(self, directory: Path, workspace: str, scrub: Callable[[str], str]) -> None:
        self.directory = directory
        self.workspace = workspace
        self.scrub = scrub
        self.written: list[tuple[CaseResult, str]] = []  # (test, its file's name)
        self._taken: set[str] = {"index.html"}
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AgentformError(
                f"cannot write test pages to {directory}: {exc.strerror}"
            ) from None

    def write(self, case: CaseResult, record: TestRecord, service: TestService) -> str:
        """The test's page written; its path as the reports link it (`DIR/NAME.html`)."""
        views, org_id, names = [], record.org_id, record.named
        there: list[str] = []
        if org_id is not None:
            with service.app.state.db.read() as conn:
                there = execution_ids(conn, org_id)
                for execution in there:
                    view = execution_view(conn, org_id, execution)
                    views.append({**view, "name": names(execution)})
        steps = [
            StepRecord(s.where, s.what, [(i, names(i)) for i, _ in s.started], s.failed)
            for s in record.steps
        ]
        # started, then forgotten by the service's retention as the test's clock moved
        pruned = [(i, name) for s in steps for i, name in s.started if i not in there]
        html = static_page(
            "test_page.html",
            case=case,
            steps=steps,
            views=views,
            pruned=pruned,
            workspace=self.workspace,
        )
        name = page_name(case, self._taken)
        self._save(name, self.scrub(html))
        self.written.append((case, name))
        return str(self.directory / name)

    def finish(self) -> str:
        """`index.html`, every test's page with its outcome, written; its path."""
        html = static_page("test_index.html", pages=self.written, workspace=self.workspace)
        self._save("index.html", self.scrub(html))
        return str(self.directory / "index.html")

    def _save(self, name: str, html: str) -> None:
        try:
            (self.directory / name).write_text(html, encoding="utf-8")
        except OSError as exc:
            raise AgentformError(f"cannot write {self.directory / name}: {exc.strerror}") from None
