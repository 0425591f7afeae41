"""Functions a reader can hold: none over 60 lines under src/agentform.

A function's length runs from its `def` line to its last line (decorators not
counted); a nested function counts within its outer one, and on its own too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "agentform"
LONGEST = 60
SPLIT_HERE = ("config", "api", "cli", "core")  # the areas already split


def long_functions(root: Path, longest: int = LONGEST) -> list[str]:
    """`file:line: name (N lines)` of each function longer than `longest` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for name, node in _functions(tree, ""):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > longest:
                where = path.relative_to(root.parent)
                found.append(f"{where}:{node.lineno}: {name} ({length} lines)")
    return found


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(node: ast.AST, prefix: str) -> list[tuple[str, Function]]:
    """Every function under `node`, named as `Class.method` or `outer.inner`."""
    found: list[tuple[str, Function]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((prefix + child.name, child))
            found += _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            found += _functions(child, f"{prefix}{child.name}.")
        else:
            found += _functions(child, prefix)
    return found


def _function(name: str, length: int, indent: str = "") -> str:
    """The source of a function `length` lines long, its `def` line included."""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(length - 1))
    return f"{indent}def {name}():\n{body}"


def test_the_count_catches_a_long_function_a_method_and_a_nested_one(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        _function("fits", LONGEST)
        + _function("long", LONGEST + 1)
        + "class C:\n"
        + _function("method", LONGEST + 1, "    ")
        + "def outer():\n"
        + _function("inner", LONGEST + 1, "    ")
    )
    assert long_functions(tmp_path / "pkg") == [
        "pkg/m.py:61: long (61 lines)",
        "pkg/m.py:123: C.method (61 lines)",
        "pkg/m.py:184: outer (62 lines)",
        "pkg/m.py:185: outer.inner (61 lines)",
    ]


@pytest.mark.parametrize("area", SPLIT_HERE)
def test_no_function_over_60_lines_in(area: str) -> None:
    found = long_functions(PACKAGE / area)
    assert not found, f"functions over {LONGEST} lines:\n" + "\n".join(found)


def test_no_function_over_60_lines() -> None:
    found = long_functions(PACKAGE)
    assert not found, f"functions over {LONGEST} lines:\n" + "\n".join(found)
