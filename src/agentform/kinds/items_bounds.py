"""The bounds of an itemsFile's shape that its parsers would otherwise meet as a crash:
JSON nested deeper than a workspace file may be (json.loads recurses, and stops with
a RecursionError past Python's limit), and a CSV cell longer than the csv module
reads (`field larger than field limit`). Each is found at its item or its row and
column, like every other problem of the file (items_file.py)."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from typing import Any

from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.yamlpos import MAX_DEPTH

MAX_CELL = csv.field_size_limit()
"""Characters of one CSV cell (the csv module's own limit, left as it is)."""

_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def json_too_deep(text: str, name: str) -> tuple[str, Position] | None:
    """The problem of the first item of `text` (a JSON list of items) nested deeper
    than MAX_DEPTH levels, at its bracket past the limit; None when none is. The
    list itself is not a level of its items."""
    depth, item = 0, 0
    for token in _JSON_TOKENS.finditer(text):
        char = token.group()[0]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH + 1:
                offset = token.start()
                line = text.count("\n", 0, offset) + 1
                column = offset - text.rfind("\n", 0, offset)
                message = (
                    f"itemsFile {name}: item {item + 1} is nested deeper than {MAX_DEPTH} levels"
                )
                return message, Position(name, line, column)
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 1:
            item += 1
    return None


def csv_records(
    records: Iterator[list[str]], unreadable: Callable[[csv.Error], None]
) -> Iterator[list[str]]:
    """The reader's records, until one it cannot read (a cell past MAX_CELL characters,
    a NUL): that calls `unreadable` (the reader's line is where it is) and ends the
    file's rows, as the reader cannot go on."""
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except csv.Error as exc:
            unreadable(exc)
            return
        if record:
            yield record


def long_cell(line: str, delimiter: str) -> tuple[int, int]:
    """(the cell's index, its column on the line) of the first cell of `line` longer
    than MAX_CELL characters, quotes minded; (0, 1) when the line has none (the cell
    began on an earlier line)."""
    start, quoted, index = 0, False, 0
    for offset, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == delimiter and not quoted:
            if offset - start > MAX_CELL:
                return index, start + 1
            start, index = offset + 1, index + 1
    return (index, start + 1) if len(line) - start > MAX_CELL else (0, 1)


def unreadable_row(
    reader: Any,
    name: str,
    text: str,
    delimiter: str,
    header: list[str],
    diagnostics: Diagnostics,
    exc: csv.Error,
) -> None:
    """The row the csv module cannot read, said at its line (and cell): the rows
    after it are not read."""
    line = reader.line_num
    if "field limit" not in str(exc):
        diagnostics.error(
            f"itemsFile {name}: row {line - 1} cannot be read ({exc})", Position(name, line, 1)
        )
        return
    written = text.split("\n", line)[line - 1] if line >= 1 else ""
    index, column = long_cell(written, delimiter)
    named = f" ({header[index]})" if index < len(header) else ""
    diagnostics.error(
        f"itemsFile {name}: row {line - 1}, cell {index + 1}{named}: longer than "
        f"{MAX_CELL:,} characters, the most a cell holds",
        Position(name, line, column),
    )
