"""Modules a reader can hold: none over 300 lines under src/agentform, and each
with a docstring saying its role.

A module's length is its count of lines (`wc -l`). The modules in NOT_YET_SPLIT
are over it still; each may not grow past the length it had when listed (a
ratchet), and leaves the list once it is split.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "agentform"
LONGEST = 300
# A module (under src/agentform) over the bound that cannot be split yet -> the most
# lines it may have meanwhile. Empty: every module is within it.
NOT_YET_SPLIT: dict[str, int] = {}


def long_modules(root: Path, ceilings: dict[str, int], longest: int = LONGEST) -> list[str]:
    """`file (N lines, at most M)` of each module under `root` longer than it may be:
    `longest` lines, or its own ceiling in `ceilings` (by its path under `root`)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        most = ceilings.get(where, longest)
        length = len(path.read_text().splitlines())
        if length > most:
            found.append(f"{where} ({length} lines, at most {most})")
    return found


def undocumented(root: Path) -> list[str]:
    """Each module under `root` that has no docstring."""
    return [
        path.relative_to(root).as_posix()
        for path in sorted(root.rglob("*.py"))
        if ast.get_docstring(ast.parse(path.read_text(), str(path))) is None
    ]


def _module(length: int) -> str:
    return "".join(f"x{i} = {i}\n" for i in range(length))


def test_the_count_catches_a_long_module_and_one_grown_past_its_ceiling(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "fits.py").write_text(_module(LONGEST))
    (tmp_path / "long.py").write_text(_module(LONGEST + 1))
    (tmp_path / "sub" / "listed.py").write_text(_module(LONGEST + 10))
    (tmp_path / "sub" / "grown.py").write_text(_module(LONGEST + 11))
    ceilings = {"sub/listed.py": LONGEST + 10, "sub/grown.py": LONGEST + 10}
    assert long_modules(tmp_path, ceilings) == [
        "long.py (301 lines, at most 300)",
        "sub/grown.py (311 lines, at most 310)",
    ]


def test_no_module_over_300_lines() -> None:
    found = long_modules(PACKAGE, NOT_YET_SPLIT)
    assert not found, f"modules over {LONGEST} lines (split them along their seams):\n" + "\n".join(
        found
    )


def test_a_module_not_yet_split_is_still_over_300_lines() -> None:
    # Once split, a module leaves NOT_YET_SPLIT: its ceiling would let it grow back.
    within = [m for m in NOT_YET_SPLIT if len((PACKAGE / m).read_text().splitlines()) <= LONGEST]
    assert not within, f"split: take them out of NOT_YET_SPLIT: {within}"


def test_the_docstring_check_catches_a_module_without_one(tmp_path: Path) -> None:
    (tmp_path / "said.py").write_text('"""What it is for."""\nx = 1\n')
    (tmp_path / "unsaid.py").write_text("# a comment is not a docstring\nx = 1\n")
    assert undocumented(tmp_path) == ["unsaid.py"]


def test_every_module_says_its_role() -> None:
    found = undocumented(PACKAGE)
    assert not found, "modules without a docstring saying their role:\n" + "\n".join(found)
