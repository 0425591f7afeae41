"""Progress of an apply: a live display on a terminal (done / total, failures,
elapsed time, with rich), one plain line per finished change when piped."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from agentform.engine.apply import ChangeResult
from agentform.engine.model import Change
from agentform.output.text import TextView


class PlainProgress:
    """One line per finished change (what a CI log or a file gets)."""

    def __init__(self, view: TextView, say: Callable[[str], None]) -> None:
        self.view = view
        self.say = say

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def started(self, change: Change) -> None:
        pass

    def finished(self, result: ChangeResult) -> None:
        self.say(self.view.progress(result))


class LiveProgress:
    """A live bar under the finished lines: done / total, failures, elapsed."""

    def __init__(self, view: TextView, total: int, console: Console) -> None:
        self.view = view
        self.failed = 0
        self.display = Progress(
            TextColumn("[bold]Applying[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.display.add_task("apply", total=total, failed=0)

    def __enter__(self) -> LiveProgress:
        self.display.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.display.stop()

    def started(self, change: Change) -> None:
        pass

    def finished(self, result: ChangeResult) -> None:
        if result.status == "failed":
            self.failed += 1
        self.display.console.print(Text.from_ansi(self.view.progress(result)))
        self.display.update(self.task, advance=1, failed=self.failed)
