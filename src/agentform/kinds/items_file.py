"""`itemsFile:` of a batch: its items read from a CSV or JSON file beside the YAML.

A CSV has a header row (cells separated by commas, or by semicolons or tabs
when the header row has no comma): a column per input, `metadata.KEY` columns for metadata,
and `agentProfile`, `agentProfilePool`, `agentProfileId`, `agentProfilePoolId`,
`version` columns for those fields (an empty cell leaves the field out). An input
whose name is one of those, or close to one, is written `inputs.NAME`: a column
close to a field's name is taken for a misspelling of it, not silently for an
input. An input's header may carry a type, `amount:number` (see csv_types.py).
A JSON file is a list of items as written in YAML. Every problem is an
error at the file's line (a JSON item's where it opens), all of them at once.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, overload

from pydantic import ValidationError

from agentform.core.bounds import too_large
from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.problems import did_you_mean, problems_from
from agentform.core.words import counted
from agentform.kinds.batch_items import BatchItem
from agentform.kinds.csv_types import CellColumns, CellError, split_type, typed
from agentform.kinds.items_bounds import csv_records, json_too_deep, unreadable_row
from agentform.rules.batches import ITEMS_MAX

FIELD_COLUMNS = ("agentProfile", "agentProfilePool", "agentProfileId", "agentProfilePoolId")
PREFIXES = ("metadata", "inputs")
CLOSE = 0.8  # how alike a column must be to a field's name to be taken for it


def read_items_file(
    path: Path, name: str, position: Position, diagnostics: Diagnostics
) -> tuple[list[BatchItem], Sequence[Position], bytes] | None:
    """The items of the file, where each was written, and the file's bytes; None
    after a diagnostic. `name` is how messages call the file; `position` is where
    the YAML names it."""
    if why := too_large(path):
        diagnostics.error(f"itemsFile {name}: {why}", position)
        return None
    try:
        content = path.read_bytes()
        text = content.decode("utf-8-sig")
    except OSError as exc:
        diagnostics.error(f"itemsFile {name}: cannot read it ({exc.strerror})", position)
        return None
    except UnicodeDecodeError:
        diagnostics.error(f"itemsFile {name}: is not UTF-8 text", position)
        return None
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        diagnostics.error(f"itemsFile {name}: must be a .csv or a .json file", position)
        return None
    rows = _csv_rows if suffix == ".csv" else _json_rows
    read = rows(text, name, position, diagnostics)
    if read is None:
        return None
    rows_read, positions = read
    if len(rows_read) > ITEMS_MAX:
        diagnostics.error(
            f"itemsFile {name}: has more than {ITEMS_MAX:,} items, the most a batch holds",
            position,
        )
        return None
    items = []
    for index, row in enumerate(rows_read):
        try:
            items.append(BatchItem.model_validate(row))
        except ValidationError as exc:
            for problem in problems_from(exc, model=BatchItem):
                diagnostics.error(f"itemsFile item {index + 1}: {problem}", positions[index])
            items.append(BatchItem())
    if not items:
        diagnostics.error(f"itemsFile {name}: has no items", position)
    return items, positions, content


Rows = tuple[list[Any], Sequence[Position]]  # the items as read, and where each is


def _csv_rows(text: str, name: str, position: Position, diagnostics: Diagnostics) -> Rows | None:
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    cell_columns = CellColumns(text, delimiter)
    header = next(reader, None)
    if header is None:
        diagnostics.error(f"itemsFile {name}: has no header row", position)
        return None
    at_header = Position(name, 1, 1)
    columns = _columns(header, lambda why: diagnostics.error(f"itemsFile {name}: {why}", at_header))
    rows: list[dict[str, Any]] = []
    lines: list[Position] = []
    unreadable = partial(unreadable_row, reader, name, text, delimiter, header, diagnostics)
    for number, record in enumerate(csv_records(reader, unreadable), start=1):
        if number > ITEMS_MAX:  # stop reading: the count is refused as it is
            rows.append({})
            break
        line = reader.line_num
        if len(record) != len(header):
            cells = counted(len(record), "cell")
            diagnostics.error(
                f"itemsFile {name}: row {number} has {cells}, the header {len(header)}",
                Position(name, line, 1),
            )
            continue
        if columns is not None:
            row = _Row(name, number, line, header, diagnostics)
            rows.append(_item(columns, record, partial(row.bad_cell, columns=cell_columns)))
            lines.append(Position(name, line, 1))
    return None if columns is None else (rows, lines)


class _Row:
    """One row, to report a cell that does not read as its column's type at the cell."""

    def __init__(
        self, name: str, number: int, line: int, header: list[str], diagnostics: Diagnostics
    ) -> None:
        self.name, self.number, self.line = name, number, line
        self.header, self.diagnostics = header, diagnostics

    def bad_cell(self, index: int, why: str, columns: CellColumns) -> None:
        message = f"itemsFile {self.name}: row {self.number}, column {self.header[index]}: "
        at = Position(self.name, self.line, columns.of(self.line, index))
        self.diagnostics.error(message + why, at)


def _delimiter(text: str) -> str:
    """',' unless the header row has none and separates with ';' or a tab, as
    spreadsheets in many locales write CSV."""
    header = text.split("\n", 1)[0]
    if "," in header:
        return ","
    return next((d for d in (";", "\t") if d in header), ",")


Column = tuple[str, str, str | None]  # where it goes, its name there, its type


def _columns(header: list[str], error: Any) -> list[Column] | None:
    """Each column as (where it goes: field, metadata or inputs; the name there; its
    type, csv_types.py); None after an error."""
    out: list[Column] = []
    seen: set[str] = set()
    ok = True
    for index, written in enumerate(header, start=1):
        column, kind, problem = split_type(written)
        if problem:
            error(problem)
            ok = False
            continue
        placed = _column(index, column, seen, error)
        seen.add(column)
        if placed is None:
            ok = False
        elif kind is not None and placed[0] != "inputs":
            error(f"column '{written}': only an input's column takes a type")
            ok = False
        else:
            out.append((*placed, kind))
    return out if ok else None


def _column(index: int, column: str, seen: set[str], error: Any) -> tuple[str, str] | None:
    """Where a column goes (field, metadata or inputs) and its name there; None after
    an error."""
    if not column.strip():
        error(f"column {index} has no name")
    elif column in seen:
        error(f"column '{column}' is written twice")
    elif column in (*FIELD_COLUMNS, "version"):
        return ("field", column)
    elif column.split(".", 1)[0] in PREFIXES and "." in column:
        prefix, key = column.split(".", 1)
        return (prefix, key)
    elif suggestion := _suggestion(column):
        error(
            f"column '{column}' is no field{suggestion}; an input of that name "
            f"is written 'inputs.{column}'"
        )
    else:
        return ("inputs", column)
    return None


def _suggestion(column: str) -> str:
    """The shared "did you mean" when `column` is close to a field or to a prefixed
    column of the same key (`meta.team`: `metadata.team`), else ''."""
    known = [*FIELD_COLUMNS, "version"]
    if "." in column:
        key = column.split(".", 1)[1]
        known += [f"{prefix}.{key}" for prefix in PREFIXES]
    return did_you_mean(column, known, cutoff=CLOSE)


def _item(
    columns: list[Column], record: list[str], bad_cell: Callable[[int, str], None]
) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for index, ((where, key, kind), cell) in enumerate(zip(columns, record, strict=True)):
        if where == "field":
            if cell:
                item[key] = int(cell) if key == "version" and cell.strip().isdigit() else cell
        elif kind is not None and kind != "string" and not cell.strip():
            continue  # a typed column's empty cell holds no value: the input is left out
        else:
            try:
                item.setdefault(where, {})[key] = typed(cell, kind)
            except CellError as exc:
                bad_cell(index, str(exc))
    return item


def _json_rows(text: str, name: str, position: Position, diagnostics: Diagnostics) -> Rows | None:
    if deep := json_too_deep(text, name):
        diagnostics.error(*deep)
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        diagnostics.error(
            f"itemsFile {name}: not JSON ({exc})", Position(name, exc.lineno, exc.colno)
        )
        return None
    if not isinstance(data, list):
        diagnostics.error(f"itemsFile {name}: must hold a list of items", position)
        return None
    return data, _JsonItemPositions(text, name, len(data))


class _JsonItemPositions(Sequence[Position]):
    """Where each item of a JSON list opens, worked out only when one is asked for
    (a problem to report): the values come from one json.loads, the positions from
    a second pass over the list, one element at a time (see _element_offsets)."""

    def __init__(self, text: str, name: str, count: int) -> None:
        self.text, self.name, self.length = text, name, count
        self.offsets: list[int] | None = None
        self.line_starts: list[int] = []

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> Position: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Position]: ...
    def __getitem__(self, index: int | slice) -> Position | Sequence[Position]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.length))]
        if self.offsets is None:
            self.offsets = _element_offsets(self.text)
            self.line_starts = [0, *(i + 1 for i, c in enumerate(self.text) if c == "\n")]
        offset = self.offsets[index]
        line = bisect.bisect_right(self.line_starts, offset)
        return Position(self.name, line, offset - self.line_starts[line - 1] + 1)


def _element_offsets(text: str) -> list[int]:
    """The offset in `text` of each element of the JSON list it holds.

    `text` has already parsed as a list, so only the list's own punctuation needs
    walking here: JSONDecoder.raw_decode (the C scanner) reads each element whole,
    from where it opens to where it ends, and the whitespace and commas between
    elements are skipped by hand."""
    decoder = json.JSONDecoder()
    at = _skip_space(text, 0) + 1  # past the list's '['
    offsets: list[int] = []
    at = _skip_space(text, at)
    while text[at] != "]":
        offsets.append(at)
        _, at = decoder.raw_decode(text, at)
        at = _skip_space(text, at)
        if text[at] == ",":
            at = _skip_space(text, at + 1)
    return offsets


def _skip_space(text: str, at: int) -> int:
    """The offset of the first character at or after `at` that is not JSON whitespace."""
    match = _SPACE.match(text, at)
    return match.end() if match else at


_SPACE = re.compile(r"[ \t\n\r]*")
