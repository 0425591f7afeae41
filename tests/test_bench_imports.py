"""Every benchmark names only what agentform has: a module split or a name moved
breaks `bench/` silently otherwise, as nothing runs the benchmarks but a person
on demand (bench/service_auth.py imported a module gone for a release)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "bench"


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each `from agentform... import name` in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentform"):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("agentform")]
    return found


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_a_benchmark_imports_only_what_exists(path: Path) -> None:
    for module_name, name in _imports(path):
        module = importlib.import_module(module_name)
        if name and not hasattr(module, name):
            importlib.import_module(f"{module_name}.{name}")  # a submodule, else it fails
