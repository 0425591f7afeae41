"""Typed columns of an items CSV: a header `amount:number` makes every cell of its
column a number, so an agent comparing `amount > 100` gets a number, not text.

Types: `string` (what a plain header is), `number` (an integer or a decimal, as
JSON writes them), `integer`, `boolean` (`true` or `false`, in any case, as
spreadsheets write TRUE), `json` (any JSON value, nested no deeper than a YAML
file may be). An empty cell of a typed column leaves the input out: there is no
number in it. A cell that does not read as its type is an error at its row and
column, all of them at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.core.yamlpos import MAX_DEPTH

_INTEGER = re.compile(r"[-+]?[0-9]+")
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


class CellError(AgentformError, ValueError):
    """A cell that does not read as its column's type; the message says why."""


def _integer(cell: str) -> int:
    if not _INTEGER.fullmatch(cell):
        raise CellError("is not an integer")
    return int(cell)


def _number(cell: str) -> int | float:
    if _INTEGER.fullmatch(cell):
        return int(cell)
    if not _NUMBER.fullmatch(cell):
        raise CellError("is not a number")
    value = float(cell)
    if value in (float("inf"), float("-inf")):
        raise CellError("is too large a number")
    return value


def _boolean(cell: str) -> bool:
    word = cell.lower()
    if word not in ("true", "false"):
        raise CellError("is not a boolean: write true or false")
    return word == "true"


def _json(cell: str) -> Any:
    try:
        value = json.loads(cell)
    except RecursionError:
        raise CellError(f"is JSON nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise CellError(f"is not JSON ({exc.msg} at character {exc.pos + 1})") from None
    if _depth(value) > MAX_DEPTH:
        raise CellError(f"is JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


TYPES: dict[str, Callable[[str], Any]] = {
    "string": str,
    "number": _number,
    "integer": _integer,
    "boolean": _boolean,
    "json": _json,
}


class CellColumns:
    """The column a cell starts at on its line as written, for a message (the csv
    module keeps no offsets): the line is walked again, quotes minded; a line whose
    quotes do not balance (a cell spanning lines) gives its first column. The file
    is split into lines once, when a cell is first reported."""

    def __init__(self, text: str, delimiter: str) -> None:
        self.text, self.delimiter = text, delimiter
        self.lines: list[str] | None = None

    def of(self, line: int, index: int) -> int:
        if self.lines is None:
            self.lines = [text.rstrip("\r") for text in self.text.split("\n")]
        written = self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
        if written.count('"') % 2:
            return 1
        starts, quoted = [0], False
        for offset, char in enumerate(written):
            if char == '"':
                quoted = not quoted
            elif char == self.delimiter and not quoted:
                starts.append(offset + 1)
        return starts[index] + 1 if index < len(starts) else 1


def split_type(column: str) -> tuple[str, str | None, str | None]:
    """(the column's name, its type or None, a problem with the type or None)."""
    if ":" not in column:
        return column, None, None
    name, _, kind = column.rpartition(":")
    name, kind = name.rstrip(), kind.strip()  # `amount : number`, as people space it
    if kind in TYPES:
        return name, kind, None
    hint = did_you_mean(kind, list(TYPES))
    known = ", ".join(TYPES)
    return name, None, f"column '{column}': unknown type '{kind}'{hint} (types: {known})"


def typed(cell: str, kind: str | None) -> Any:
    """The cell's value; raises CellError saying what is wrong (the cell, shortened)."""
    if kind is None or kind == "string":
        return cell
    try:
        return TYPES[kind](cell.strip())
    except CellError as exc:
        shown = cell if len(cell) <= 40 else cell[:37] + "..."
        raise CellError(f"{shown!r} {exc}") from None
