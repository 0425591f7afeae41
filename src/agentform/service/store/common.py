"""What the store modules share: lookups scoped to an organization, name conflicts,
a row read into its wire model, and a JSON column read back (`stored_json`)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter

from agentform.rules.values import replace_unencodable
from agentform.service.errors import conflict, not_found

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

M = TypeVar("M", bound=BaseModel)
D = TypeVar("D", bound="DataclassInstance")
_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


def fetch_owned(
    conn: sqlite3.Connection,
    table: str,
    row_id: object,
    org_id: str,
    what: str,
    extra_where: str = "",
    extra_args: tuple[Any, ...] = (),
) -> sqlite3.Row:
    """The row of `table` with this id in the caller's organization, else 404.

    Another organization's id is also 404, so existence never leaks
    (docs/service/contract.md#conventions).
    """
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM {table} WHERE id = ? AND organization_id = ? {extra_where}",
        (str(row_id), org_id, *extra_args),
    ).fetchone()
    if row is None:
        raise not_found(what)
    return row


def fetch_row(conn: sqlite3.Connection, table: str, row_id: str) -> sqlite3.Row:
    """A row known to exist (just written in this transaction)."""
    row: sqlite3.Row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()
    return row


@contextmanager
def unique_name(what: str, name: str | None) -> Iterator[None]:
    """Turns the database's uniqueness violation into 409 name taken."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        if "UNIQUE" in str(exc):
            raise conflict(f"a {what} named '{name}' already exists") from None
        raise


@cache
def _columns(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(field, column) of each field: `createdAt` is read from `created_at`."""
    return tuple((name, _CAMEL_HUMP.sub("_", name).lower()) for name in model.model_fields)


def model_from_row(model: type[M], row: sqlite3.Row, **computed: Any) -> M:
    """`model` with each field read from the column of its snake_case name, but for
    the `computed` ones (a field whose column is named otherwise, or is converted)."""
    values = {field: row[column] for field, column in _columns(model) if field not in computed}
    return model(**values, **computed)


class RowModel(Generic[M]):
    """Rows read into `model` as `model_from_row` reads them (the `computed` fields
    from the row by their functions), one at a time or a page's at once: a list of
    rows is validated in one call, a tenth of the cost of a model at a time.

    Columns are read by position: a `sqlite3.Row` looked up by name compares the
    name with each column's in turn, which made reading a page's rows cost half
    again as much as validating them. The positions are found once per column
    layout (a query's `SELECT` list) and kept.
    """

    def __init__(self, model: type[M], **computed: Callable[[sqlite3.Row], Any]) -> None:
        self.model = model
        self._computed = computed
        read = [(f, c) for f, c in _columns(model) if f not in computed]
        self._fields = tuple(f for f, _ in read)
        self._names = tuple(c for _, c in read)
        self._getters: dict[tuple[str, ...], Callable[[sqlite3.Row], tuple[Any, ...]]] = {}
        self._many: TypeAdapter[list[M]] = TypeAdapter(list[model])  # type: ignore[valid-type]

    def _getter(self, row: sqlite3.Row) -> Callable[[sqlite3.Row], tuple[Any, ...]]:
        """The model's columns of a row as a tuple, by their positions in its layout."""
        layout = tuple(row.keys())
        found = self._getters.get(layout)
        if found is None:
            columns = itemgetter(*(layout.index(name) for name in self._names))
            found = columns if len(self._names) > 1 else lambda row: (columns(row),)
            self._getters[layout] = found  # a few layouts at most: one per query shape
        return found

    def _values(self, rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
        if not rows:
            return []
        read, fields, computed = self._getter(rows[0]), self._fields, self._computed.items()
        out = []
        for row in rows:
            # As long by construction (the getter reads each field); strict=True costs
            # a third of the dict.
            values = dict(zip(fields, read(row), strict=False))
            for field, compute in computed:
                values[field] = compute(row)
            out.append(values)
        return out

    def values(self, row: sqlite3.Row) -> dict[str, Any]:
        return self._values([row])[0]

    def __call__(self, row: sqlite3.Row) -> M:
        return self.model.model_validate(self.values(row))

    def many(self, rows: Iterable[sqlite3.Row]) -> list[M]:
        return self._many.validate_python(self._values(list(rows)))


def stored_json(text: str) -> Any:
    """A JSON column's value. A lone surrogate (stored before requests were checked
    for them, docs/service/choices.md#text-utf-8-cannot-encode) comes back as U+FFFD,
    so a row that UTF-8 cannot encode is served, not a 500."""
    value = json.loads(text)
    # json.dumps writes any such code point as a `\\u` escape: without one, none.
    return replace_unencodable(value) if "\\ud" in text or "\\uD" in text else value


def row_as(kind: type[D], row: sqlite3.Row, **computed: Any) -> D:
    """The dataclass `kind` with each field read from the column of its name, but for
    the `computed` ones (a JSON column parsed, say): how the store answers typed rows."""
    values = {f.name: row[f.name] for f in fields(kind) if f.name not in computed}
    return kind(**values, **computed)
