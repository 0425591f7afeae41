"""Typed columns of an items CSV, cell by cell (kinds/csv_types.py)."""

from __future__ import annotations

from typing import Any

import pytest

from agentform.kinds.csv_types import CellColumns, CellError, split_type, typed


@pytest.mark.parametrize(
    ("cell", "kind", "value"),
    [
        ("120", "number", 120),
        (" -1.5e2 ", "number", -150.0),
        (".5", "number", 0.5),
        ("007", "integer", 7),
        ("TRUE", "boolean", True),
        ("false", "boolean", False),
        ('{"a": [1, null]}', "json", {"a": [1, None]}),
        ("007", "string", "007"),
        ("007", None, "007"),
    ],
)
def test_a_cell_reads_as_its_type(cell: str, kind: str, value: Any) -> None:
    got = typed(cell, kind)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("cell", "kind", "said"),
    [
        ("12O", "number", "'12O' is not a number"),
        ("nan", "number", "'nan' is not a number"),
        ("1e999", "number", "'1e999' is too large a number"),
        ("1.0", "integer", "'1.0' is not an integer"),
        ("\uff11\uff12", "integer", "is not an integer"),  # fullwidth: int() takes them
        ("yes", "boolean", "'yes' is not a boolean: write true or false"),
        ("0", "boolean", "'0' is not a boolean"),
        ("{", "json", "'{' is not JSON"),
        ("[" * 65 + "]" * 65, "json", "is JSON nested deeper than 64 levels"),
        ("[" * 100_000 + "]" * 100_000, "json", "is JSON nested deeper than 64 levels"),
        ("x" * 100, "number", "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not a number"),
    ],
)
def test_a_cell_that_is_not_its_type_says_why(cell: str, kind: str, said: str) -> None:
    with pytest.raises(CellError) as info:
        typed(cell, kind)
    assert said in str(info.value)


def test_a_header_type_is_one_of_the_known_ones() -> None:
    assert split_type("amount:number") == ("amount", "number", None)
    assert split_type("inputs.a:json") == ("inputs.a", "json", None)
    assert split_type("plain") == ("plain", None, None)
    assert split_type("amount : number") == ("amount", "number", None)  # spaced
    _, kind, problem = split_type("amount:int")
    assert kind is None and problem is not None
    assert "unknown type 'int'" in problem and "integer" in problem


def test_a_cell_is_placed_at_its_column_quotes_minded() -> None:
    columns = CellColumns('a,b,c\n1,"x,y",3\n"open\n', ",")
    assert [columns.of(1, i) for i in range(3)] == [1, 3, 5]
    assert [columns.of(2, i) for i in range(3)] == [1, 3, 9]
    assert columns.of(3, 1) == 1  # a quote left open: the cell spans lines
