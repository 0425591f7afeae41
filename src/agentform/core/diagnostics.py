"""Diagnostics: problems collected with severity and source position, shown together."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentform.core.diagnostic_types import Diagnostic as Diagnostic  # imported from here
from agentform.core.diagnostic_types import Position as Position
from agentform.core.errors import DiagnosticsError


@dataclass
class Diagnostics:
    """A collector: add problems as they are found, raise once at the end."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, summary: str, position: Position | None = None, detail: str = "") -> None:
        self.items.append(Diagnostic(summary, position, "error", detail))

    def warning(
        self,
        summary: str,
        position: Position | None = None,
        detail: str = "",
        address: str | None = None,
    ) -> None:
        """A problem that does not stop the run: shown, and carried into the plan
        (with the address of the object it is about, when it is about one)."""
        self.items.append(Diagnostic(summary, position, "warning", detail, address))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]

    def in_order(self) -> list[Diagnostic]:
        """Every problem, by file and position."""
        return sorted(self.items, key=_order)

    def raise_if_errors(self) -> None:
        """Raises when there is an error; the warnings are shown with the errors."""
        if self.errors:
            raise DiagnosticsError(self.in_order())


def _order(d: Diagnostic) -> tuple[str, int, int]:
    p = d.position or Position("")
    return (p.file, p.line, p.column)


def relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
