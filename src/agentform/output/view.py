"""What every view is: the text, markdown and JSON views of a command answer the
same methods, so a command asks the run context for the view of its `--format`
(`run.view(fmt)`) and never branches on the format itself.

The documents every view knows (a plan, a drift report, an apply report, a failed
run) are methods of each view. A command's own document (an inventory, an
environment diff, a routing explanation) is a `Shown`: one object with a method per
format, written in the command's view module, which a view renders by its name.
Adding a command with three formats touches its module and its view: nothing here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:  # the apply engine imports httpx: an offline view must not
    from agentform.engine.apply import ApplyReport
    from agentform.engine.drift import DriftReport
    from agentform.engine.model import Plan


class Shown(Protocol):
    """A command's own document, in the formats the command offers: the method named
    after the view's format (`text`, `markdown`, `json`, ...) renders it."""


class View(ABC):
    """One output format. `lines_on_stdout`: progress lines (a change applied, a test
    run) are part of the output; otherwise the document is the output and progress
    goes to stderr, so a program or a pull-request comment reads the document alone."""

    name: ClassVar[str]
    lines_on_stdout: ClassVar[bool] = False
    verbose: bool = False  # -v: no-ops, and values shown whole

    def show(self, document: Shown) -> str:
        """The command's own document in this format."""
        render = getattr(document, self.name, None)
        if render is None:  # a command offers only the formats its documents have
            raise TypeError(f"{type(document).__name__} has no {self.name} form")
        text: str = render(self)
        return text

    @abstractmethod
    def plan(self, plan: Plan) -> str: ...

    @abstractmethod
    def drift(self, drift: DriftReport) -> str: ...

    @abstractmethod
    def report(
        self, report: ApplyReport, workspace: str, environment: str | None = None
    ) -> str: ...

    def error(
        self, what: str, workspace: str, messages: list[str], environment: str | None = None
    ) -> str:
        """What stdout gets when the run fails: nothing, unless the format is posted
        somewhere (markdown: the pipeline posts the reason the run failed). The
        error itself goes to stderr in every format."""
        return ""


class DocumentsOnly(View):
    """A format only some commands' own documents have (`test --format junit`,
    `affected --format github-matrix`): it shows them, and never a plan, a drift
    report or an apply report. The document's method is the format's name with `_`
    for `-` (`github_matrix`)."""

    def __init__(self, fmt: str) -> None:
        self.name = fmt.replace("-", "_")  # type: ignore[misc]  # per instance here

    def plan(self, plan: Plan) -> str:
        raise TypeError(f"a plan has no {self.name} form")

    def drift(self, drift: DriftReport) -> str:
        raise TypeError(f"a drift report has no {self.name} form")

    def report(self, report: ApplyReport, workspace: str, environment: str | None = None) -> str:
        raise TypeError(f"an apply report has no {self.name} form")
