"""A diagnostic's data: where (`Position`) and what (`Diagnostic`). A leaf of `core`,
so that the exception tree (errors.py) carries diagnostics and the collector
(diagnostics.py) raises that tree's error, neither importing the other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if not self.line:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    summary: str
    position: Position | None = None
    severity: str = "error"
    detail: str = ""
    address: str | None = None  # "KIND/KEY" of the object it is about, if one

    def render(self) -> str:
        where = f"{self.position}: " if self.position else ""
        text = f"{where}{self.severity}: {self.summary}"
        return f"{text}\n  {self.detail}" if self.detail else text
