"""Leaving out, at collection, a test module that `-m` would deselect whole.

`-m` deselects tests after they are collected, and collecting a module can cost more
than its tests: schemathesis builds its fuzzing tests at collection (about 10 s of
CPU in each xdist worker), then `make test-fast` (-m "not slow and not pipeline")
deselected them all. A module's own marks (`pytestmark = [...]`, read from its
source, not imported) are on each of its tests; when the expression is false for
those marks with any other marks the expression names added (it may say `not x`,
and a test may carry `x`), no test of the module can be selected, so it is not
collected.

And the property tests' share of their examples in a tier: hypothesis' profiles
change the default count, not a count a test sets itself, so a test that sets one
asks `examples(n)` for it.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

from _pytest.mark.expression import Expression
from hypothesis import settings

FULL_EXAMPLES = 100  # hypothesis' default count: `make test` and CI run every example
FAST_EXAMPLES = 25  # the profile `make test-fast` loads (tests/conftest.py): a quarter


def examples(full: int) -> int:
    """The examples a property test written for `full` runs under the profile loaded:
    `full` in `make test` and CI, a quarter of it in `make test-fast`."""
    return max(1, full * settings().max_examples // FULL_EXAMPLES)


def module_marks(source: str) -> set[str]:
    """The marks a module's top-level `pytestmark` gives all its tests (by name)."""
    marks: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            for part in ast.walk(node.value):
                if (
                    isinstance(part, ast.Attribute)
                    and isinstance(part.value, ast.Attribute)
                    and part.value.attr == "mark"
                ):
                    marks.add(part.attr)
    return marks


def deselects_whole(expression: str, marks: set[str]) -> bool:
    """True when no test carrying `marks`, whatever other marks it has, matches."""
    if not marks:
        return False
    compiled = Expression.compile(expression)
    named = set(re.findall(r"[\w.+-]+", expression)) - {"and", "or", "not"}
    others = sorted(named - marks)  # a mark the expression does not name changes nothing
    for count in range(len(others) + 1):
        for extra in itertools.combinations(others, count):
            if compiled.evaluate(_Carrying(marks | set(extra))):
                return False
    return True


class _Carrying:
    """The `-m` matcher of a test carrying these marks."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def __call__(self, name: str, /, **kwargs: str | int | bool | None) -> bool:
        return name in self.names


def left_out(path: Path, expression: str) -> bool:
    """Whether the test module at `path` holds no test `expression` can select."""
    if not expression or not path.name.startswith("test_") or path.suffix != ".py":
        return False
    return deselects_whole(expression, module_marks(path.read_text()))
