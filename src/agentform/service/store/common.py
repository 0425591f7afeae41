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
    rows is validated in one call, a tenth of the cost of a model at a time."""

    def __init__(self, model: type[M], **computed: Callable[[sqlite3.Row], Any]) -> None:
        self.model = model
        self._computed = computed
        read = [(f, c) for f, c in _columns(model) if f not in computed]
        self._fields = tuple(f for f, _ in read)
        columns = itemgetter(*(c for _, c in read))  # a tuple of values, for 2 columns or more
        self._read = columns if len(read) > 1 else lambda row: (columns(row),)
        self._many: TypeAdapter[list[M]] = TypeAdapter(list[model])  # type: ignore[valid-type]

    def values(self, row: sqlite3.Row) -> dict[str, Any]:
        values = dict(zip(self._fields, self._read(row), strict=True))
        for field, compute in self._computed.items():
            values[field] = compute(row)
        return values

    def __call__(self, row: sqlite3.Row) -> M:
        return self.model.model_validate(self.values(row))

    def many(self, rows: Iterable[sqlite3.Row]) -> list[M]:
        return self._many.validate_python([self.values(r) for r in rows])


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
