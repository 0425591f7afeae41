"""YAML with positions: libyaml's parser and the pure-Python one give the same data,
the same positions, the same duplicate keys and the same errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentform.config.loader import load_workspace
from agentform.core import yamlpos
from agentform.core.errors import DiagnosticsError
from agentform.core.yamlpos import PURE_LOADER, Located, parse
from tests.provisioner.harness import load, write_workspace

needs_libyaml = pytest.mark.skipif(not yamlpos.LIBYAML, reason="PyYAML built without libyaml")

DOCUMENTS = [
    "profilePools:\n  - name: a\n    members: [bot-1, bot-2]\n    allowConcurrentUse: false\n",
    "profilePools: [{name: 'é ü 名前', allowConcurrentUse: yes}, {name: b, x: ~, n: 12}]\n",
    "base: &b {selectionStrategy: most_recently_used}\n"
    "profilePools:\n  - <<: *b\n    name: merged\n  - *b\n",
    "vaultTemplates:\n  - name: t\n    fields:\n      - {type: text, label: 'A', required: true}\n"
    "    description: |\n      two\n      lines\n    1: numeric key\n    true: bool key\n",
    "profilePools:\n  - name: a\n    name: b\n  - {name: c, name: d}\n",
    "",
    "# only a comment\n",
    "profilePools:\r\n  - name: crlf\r\n",
]


def every_path(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            out += every_path(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += every_path(value, (*path, i))
    return out


def summary(doc: Located) -> tuple[Any, ...]:
    paths = every_path(doc.data)
    return (
        doc.data,
        doc.duplicates,
        [doc.where(p) for p in paths],
        [doc.where(p, at_key=False) for p in paths],
        doc.where(("profilePools", 99, "nope")),
    )


@needs_libyaml
@pytest.mark.parametrize("text", DOCUMENTS)
def test_both_parsers_agree(text: str) -> None:
    assert summary(parse(text, yamlpos.FAST_LOADER)) == summary(parse(text, PURE_LOADER))


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
def test_positions_and_values(loader: type[Any] | None) -> None:
    doc = parse(DOCUMENTS[1], loader)
    # `yes` is a word: only true and false are booleans (YAML 1.2)
    assert doc.data["profilePools"][0] == {"name": "é ü 名前", "allowConcurrentUse": "yes"}
    assert doc.data["profilePools"][1] == {"name": "b", "x": None, "n": 12}
    assert doc.where(("profilePools", 1, "n")) == (1, 75)  # the key
    assert doc.where(("profilePools", 1, "n"), at_key=False) == (1, 78)  # its value
    assert doc.where(("profilePools", 0, "name"), at_key=False) == (1, 23)
    assert doc.where(("profilePools", 5)) == (1, 1)  # nearest ancestor: the top key
    duplicates = parse(DOCUMENTS[4], loader).duplicates
    assert duplicates == [("name", 3, 5), ("name", 4, 15)]
    merged = parse(DOCUMENTS[2], loader).data["profilePools"]
    assert merged[0] == {"selectionStrategy": "most_recently_used", "name": "merged"}


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
def test_a_key_is_the_text_written(loader: type[Any] | None) -> None:
    """Keys are names: `on:` (a workflow's) is 'on', not YAML 1.1's true made 'True',
    so messages and requests (an input, a header, a metadata key) say what was written."""
    doc = parse("on: push\nyes: 1\n007: 2\n~: 3\n1.50: 4\n'True': 5\n", loader)
    assert list(doc.data) == ["on", "yes", "007", "~", "1.50", "True"]
    assert doc.where(("on",)) == (1, 1) and doc.where(("007",)) == (3, 1)
    assert doc.data["on"] == "push" and doc.data["yes"] == 1  # values keep their types


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
def test_errors_are_worded_and_placed_alike(loader: type[Any] | None) -> None:
    with pytest.raises(yaml.MarkedYAMLError) as info:
        parse("profilePools:\n  - name: a\n    members: [bot-1\n", loader)
    mark = info.value.problem_mark
    assert mark is not None
    assert (info.value.problem, mark.line, mark.column) == (
        "expected ',' or ']', but got '<stream end>'",
        3,
        0,
    )


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
def test_a_recursive_alias_is_an_error_not_a_crash(loader: type[Any] | None) -> None:
    with pytest.raises(yaml.YAMLError, match="recursive alias"):
        parse("a: &x [1, *x]\n", loader)


@pytest.fixture(params=["libyaml", "pure"])
def either_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pure":
        monkeypatch.setattr(yamlpos, "FAST_LOADER", PURE_LOADER)
        monkeypatch.setattr(yamlpos, "LIBYAML", False)
    elif not yamlpos.LIBYAML:
        pytest.skip("PyYAML built without libyaml")
    return str(request.param)


def test_workspace_diagnostics_are_the_same_with_either_parser(
    either_parser: str, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "broken.yaml": "profilePools:\n  - name: a\n    members: [bot-1\n",
            "pools.yaml": "profilePools:\n  - name: a\n    colour: red\n  - {name: b, name: c}\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        "broken.yaml:4:1: error: invalid YAML: expected ',' or ']', but got '<stream end>'",
        "pools.yaml:3:5: error: profilePools.0.colour: unknown key",
        "pools.yaml:4:15: error: duplicate key 'name'",
    ]


def test_plain_and_templated_files_load_alike(either_parser: str, ws: Path) -> None:
    """A file with no template syntax skips Jinja2 but reads as if it had been rendered."""
    plain = "profilePools:\r\n  - {name: a, members: [bot-1]}\r\n"
    write_workspace(ws, {"agentform.yaml": "workspace: w\nvars: {n: a}\n"})
    (ws / "pools.yaml").write_bytes(plain.encode())
    first = load(ws)
    (ws / "pools.yaml").write_bytes(plain.replace("name: a", "name: '{{ vars.n }}'").encode())
    second = load(ws)
    assert [d.model for d in first.declared["profilePools"]] == [
        d.model for d in second.declared["profilePools"]
    ]
    assert first.declared["profilePools"][0].position.line == 2


def test_a_file_that_is_not_utf8_is_a_diagnostic(ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n"})
    (ws / "pools.yaml").write_bytes(b"profilePools:\n  - name: caf\xe9\n")
    with pytest.raises(DiagnosticsError, match=r"pools.yaml: error: not UTF-8 text \(byte 27\)"):
        load(ws)


def alias_bomb(levels: int = 9) -> str:
    """Billion laughs: each level's list names the one before ten times."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels + 1):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
def test_an_alias_bomb_is_an_error_not_gigabytes(loader: type[Any] | None) -> None:
    with pytest.raises(yaml.YAMLError) as info:
        parse(alias_bomb(), loader)
    message, position = yamlpos.problem_of(info.value)
    assert message == (
        f"aliases expand to more than {yamlpos.MAX_ALIAS_VALUES:,} values "
        "(the limit of a workspace file)"
    )
    assert position == (5, 5)  # the list whose aliases pass the limit: a4's


def test_aliases_within_the_limit_are_expanded() -> None:
    assert parse(alias_bomb(levels=3)).data["a3"][0][0][0] == ["lol"] * 10


@pytest.mark.parametrize("loader", [None, PURE_LOADER])
@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 20_000 + "]" * 20_000 + "\n",
        "- " * 20_000 + "x\n",
        "a: " + "[" * 300 + "]" * 300 + "\n",
        "a: " + "{b: " * 100 + "1" + "}" * 100 + "\n",
    ],
    ids=["flow-20000", "block-20000", "flow-300", "mapping-100"],
)
def test_deep_nesting_is_an_error_not_a_crash(loader: type[Any] | None, text: str) -> None:
    with pytest.raises(yaml.YAMLError) as info:
        parse(text, loader)
    message, position = yamlpos.problem_of(info.value)
    assert message == f"nesting deeper than {yamlpos.MAX_DEPTH} levels"
    if loader is None:  # libyaml's limit and the builder's have a mark; Python's recursion not
        assert position is not None and position[0] == 1


def test_nesting_within_the_limit_is_read() -> None:
    depth = yamlpos.MAX_DEPTH - 1
    data = parse("a: " + "[" * depth + "]" * depth + "\n").data["a"]
    levels = 1
    while data:
        (data,) = data
        levels += 1
    assert levels == depth


@pytest.mark.parametrize("name", ["pools.yaml", "agentform.yaml", "vars.yaml"])
def test_a_hostile_file_is_a_diagnostic_at_its_line(ws: Path, name: str) -> None:
    """The root file's vars and --var-file files are read by the same parser."""
    files = {"agentform.yaml": "workspace: w\n", "vars.yaml": "region: eu\n"}
    files[name] = ("workspace: w\n" if name == "agentform.yaml" else "") + alias_bomb()
    write_workspace(ws, files)
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, var_files=[ws / "vars.yaml"])
    rendered = [d.render() for d in info.value.diagnostics]
    assert any(
        r.split(":")[0].endswith(name) and "aliases expand to more than" in r for r in rendered
    ), rendered


def test_merge_keys_of_merge_keys_stay_linear() -> None:
    """Merging a mapping ten times at each of ten levels keeps its ten keys."""
    lines = ["m0: &m0 {k0: v, k1: v, k2: v, k3: v, k4: v, k5: v, k6: v, k7: v, k8: v, k9: v}"]
    for n in range(1, 10):
        lines.append(f"m{n}: &m{n} {{<<: [" + ", ".join([f"*m{n - 1}"] * 10) + "]}")
    data = parse("\n".join(lines) + "\n").data
    assert [len(m) for m in data.values()] == [10] * 10
