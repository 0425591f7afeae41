"""itemsFile as a hurried user writes it: a misspelt column, a row with a cell too
many or too few, a column twice, non-ASCII values. Every problem is an error at
the file's line, all at once, before any call."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentform.config.loader import load_workspace
from agentform.core.errors import DiagnosticsError
from agentform.core.problems import did_you_mean
from tests.provisioner.harness import Service, write_workspace

ROOT = "workspace: items\n"
BATCH = """\
batches:
  - name: b
    agent: support-agent
    startAt: 2030-01-01T00:00:00Z
    config: {type: timeBatching, batchSize: 10, batchInterval: 60}
    itemsFile: rows.csv
"""


def problems(ws: Path, csv: str) -> str:
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH, "rows.csv": csv})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    return str(info.value)


def items(ws: Path, csv: str) -> list[dict[str, object]]:
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH, "rows.csv": csv})
    (batch,) = load_workspace(ws).declared["batches"]
    return [i.model_dump(mode="json", exclude_unset=True) for i in batch.model.items]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("column", "meant"),
    [
        ("agentProfilPool", "agentProfilePool"),
        ("agentprofile", "agentProfile"),
        ("Version", "version"),
        ("metdata.team", "metadata.team"),
        ("input.order", "inputs.order"),
        ("meta.team", "metadata.team"),
    ],
)
def test_a_misspelt_column_is_an_error_with_a_suggestion(ws: Path, column: str, meant: str) -> None:
    text = problems(ws, f"order,{column}\nA-1,x\n")
    suggestion = did_you_mean(column, [meant], cutoff=0)  # the shared wording
    assert (
        f"rows.csv:1:1: error: itemsFile rows.csv: column '{column}' is no field{suggestion}; "
        f"an input of that name is written 'inputs.{column}'"
    ) in text


def test_an_input_named_like_a_field_is_written_with_the_inputs_prefix(ws: Path) -> None:
    assert items(ws, "inputs.agentProfilPool,inputs.Version\nx,y\n") == [
        {"inputs": {"agentProfilPool": "x", "Version": "y"}}
    ]


def test_id_columns_are_those_fields(ws: Path) -> None:
    pool = "5b6c0000-0000-4000-8000-000000000001"
    assert items(ws, f"order,agentProfilePoolId\nA-1,{pool}\n") == [
        {"inputs": {"order": "A-1"}, "agentProfilePoolId": pool}
    ]


def test_rows_with_a_cell_too_many_or_too_few_are_errors_at_their_lines(ws: Path) -> None:
    text = problems(ws, "order,note\nA-1,x\nA-2,y,z\nA-3\n")
    assert "rows.csv:3:1: error: itemsFile rows.csv: row 2 has 3 cells, the header 2" in text
    assert "rows.csv:4:1: error: itemsFile rows.csv: row 3 has 1 cell, the header 2" in text


def test_a_column_twice_or_without_a_name_is_an_error(ws: Path) -> None:
    text = problems(ws, "order,order,\nA-1,A-2,x\n")
    assert "rows.csv:1:1: error: itemsFile rows.csv: column 'order' is written twice" in text
    assert "rows.csv:1:1: error: itemsFile rows.csv: column 3 has no name" in text


def test_non_ascii_cells_and_a_byte_order_mark_are_read_as_written(ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH})
    (ws / "rows.csv").write_bytes("\ufeffnote\nBestellung für Jürgen ✓\n".encode())
    (batch,) = load_workspace(ws).declared["batches"]
    assert batch.model.items[0].inputs == {"note": "Bestellung für Jürgen ✓"}  # type: ignore[attr-defined]


def test_plan_errors_of_items_point_at_the_item_in_the_yaml_or_the_file(
    service: Service, ws: Path
) -> None:
    yaml_items = BATCH.replace("itemsFile: rows.csv\n", "items:\n")
    yaml_items += "      - {inputs: {order: A-1}}\n      - {agentProfilePool: checkout-ue}\n"
    files = {
        "agentform.yaml": ROOT,
        "pools.yaml": "profilePools:\n  - {name: checkout-eu}\n",
        "a.yaml": yaml_items,
        "b.yaml": BATCH.replace("name: b", "name: c"),
        "rows.csv": "order,agentProfilePool\nA-1,checkout-eu\nA-2,chekout-eu\n",
    }
    write_workspace(ws, files)
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    text = str(info.value)
    assert (
        "a.yaml:8:9: error: batch b: items[1].agentProfilePool: no pool named 'checkout-ue' "
        "(did you mean 'checkout-eu'?)"
    ) in text
    assert "rows.csv:3:1: error: batch c: items[1].agentProfilePool: no pool named" in text
    assert service.log.writes() == []


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_spreadsheet_csv_with_semicolons_or_tabs_is_read_by_its_header(
    ws: Path, delimiter: str
) -> None:
    """Spreadsheets in many locales separate cells with ';' (or tabs): the header row
    says which, instead of one column named 'order;metadata.team'."""
    text = f"order{delimiter}metadata.team\nA-1{delimiter}pay, ments\n"
    assert items(ws, text) == [{"inputs": {"order": "A-1"}, "metadata": {"team": "pay, ments"}}]


def test_a_json_items_file_holds_items_as_written_in_yaml(ws: Path) -> None:
    batch = BATCH.replace("rows.csv", "rows.json")
    rows = '[{"inputs": {"order": "Ä-1"}, "agentProfilePool": "p", "metadata": {"k": "v"}}, {}]'
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": batch, "rows.json": rows})
    (declared,) = load_workspace(ws).declared["batches"]
    assert [i.model_dump(exclude_unset=True) for i in declared.model.items] == [  # type: ignore[attr-defined]
        {"inputs": {"order": "Ä-1"}, "agentProfilePool": "p", "metadata": {"k": "v"}},
        {},
    ]
    (ws / "rows.json").write_text('[{}, {"input": {"order": "A-2"}}]')
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert "rows.json:1:6: error: itemsFile item 2: input:" in str(info.value)


JSON_ITEMS = """\
[
  {"inputs": {"order": "A-1"}},
  {"inputs": {"order": "A-2"}},
  {
    "inputs": {"order": "A-3"},
    "agentProfilePool": "chekout-eu"%s
  }
]
"""


def test_problems_of_json_items_point_at_the_item_in_the_file(service: Service, ws: Path) -> None:
    files = {
        "agentform.yaml": ROOT,
        "pools.yaml": "profilePools:\n  - {name: checkout-eu}\n",
        "b.yaml": BATCH.replace("rows.csv", "rows.json"),
        "rows.json": JSON_ITEMS % ',\n    "version": "2"',
    }
    write_workspace(ws, files)
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert "rows.json:4:3: error: itemsFile item 3: version: Input should be" in str(info.value)
    (ws / "rows.json").write_text(JSON_ITEMS % "")
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    assert "rows.json:4:3: error: batch b: items[2].agentProfilePool: no pool named" in str(
        info.value
    )
    (ws / "rows.json").write_text(JSON_ITEMS % ",")
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert "rows.json:7:3: error: itemsFile rows.json: not JSON (Expecting" in str(info.value)


def test_json_item_positions_are_where_each_item_opens_whatever_lies_between(
    tmp_path: Path,
) -> None:
    """Each item's line and column, past tabs, CRLF line ends, a BOM, non-ASCII text,
    nested lists and strings holding the list's own punctuation (`],` `{`)."""
    from agentform.core.diagnostics import Diagnostics, Position
    from agentform.kinds.items_file import read_items_file

    text = (
        '\ufeff \r\n[\t{"inputs": {"a": "],[{ Ä"}},{"metadata": {"k": "[1, 2]"}}\r\n'
        '  ,\n\n\t\t{"inputs": {"b": "x"}, "extra": [[1, [2]], {"c": []}]} ,  {}\r\n]\n'
    )
    path = tmp_path / "rows.json"
    path.write_bytes(text.encode("utf-8"))
    read = read_items_file(path, "rows.json", Position("b.yaml", 1, 1), Diagnostics())
    assert read is not None
    _, positions, _ = read
    assert [(p.line, p.column) for p in positions] == [(2, 3), (2, 31), (5, 3), (5, 61)]
    assert [(p.line, p.column) for p in positions[1:3]] == [(2, 31), (5, 3)]


def test_an_empty_json_list_is_no_items(tmp_path: Path) -> None:
    from agentform.core.diagnostics import Diagnostics, Position
    from agentform.kinds.items_file import _element_offsets, read_items_file

    assert _element_offsets(" [ \n ] ") == []
    (tmp_path / "rows.json").write_text(" [ \n ] ")
    diagnostics = Diagnostics()
    read = read_items_file(
        tmp_path / "rows.json", "rows.json", Position("b.yaml", 3, 5), diagnostics
    )
    assert read is not None and list(read[1]) == []
    assert [d.summary for d in diagnostics.errors] == ["itemsFile rows.json: has no items"]
