"""Which files are workspace files.

`*.yaml` and `*.yml` below the workspace root, in sorted path order with the root
file (`agentform.yaml`, or `agentform.yml`) first, minus:
- anything under a hidden directory, and hidden files (`.agentform/`, `.github/`…);
- the `tests/` directory at the root: it holds the workspace's tests (`agentform
  test`), not objects; and the `policies/` directory at the root: it holds rules
  that judge plans (`agentform.policies`), never objects;
- what `.agentformignore` at the root names (gitignore syntax, read with pathspec);
- agentform's own artifacts written inside the workspace: a vcrpy cassette
  (`--record-cassette run.yaml`) or a saved plan or report (JSON holding a
  `formatVersion`, e.g. `plan --out plan.yaml`). They are recognised by their
  content, so they are skipped whatever they are called and wherever they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentform.core.bounds import Bounds, broken_link, resolved
from agentform.core.diagnostics import Diagnostic, Position
from agentform.core.errors import DiagnosticsError

if TYPE_CHECKING:
    import pathspec

ROOT_NAMES = ("agentform.yaml", "agentform.yml")
IGNORE_FILE = ".agentformignore"
SUFFIXES = (".yaml", ".yml")
TESTS_DIR = "tests"
POLICIES_DIR = "policies"

_CASSETTE = re.compile(r"\A(?:\s*#[^\n]*\n)*\s*interactions:\s*(?:\n|$)")
_REPORT = re.compile(r'\A\s*\{\s*"formatVersion"\s*:')
_JUNIT = re.compile(r'\A<\?xml[^>]*\?>\s*<testsuites name="agentform test"')


def root_file(root: Path) -> Path | None:
    """The workspace's root file; a DiagnosticsError when both spellings exist."""
    found = [root / name for name in ROOT_NAMES if (root / name).is_file()]
    if len(found) > 1:
        raise DiagnosticsError(
            [
                Diagnostic(
                    f"both {ROOT_NAMES[0]} and {ROOT_NAMES[1]} exist: keep one", Position(str(root))
                )
            ]
        )
    return found[0] if found else None


def ignore_spec(root: Path) -> pathspec.PathSpec[Any] | None:
    """What `.agentformignore` names; None without one (pathspec is then not imported)."""
    path = root / IGNORE_FILE
    if not path.is_file():
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(path.read_text().splitlines())


def is_artifact(text: str) -> bool:
    """A cassette, saved plan or report agentform wrote (never a workspace file)."""
    return bool(_CASSETTE.match(text) or _REPORT.match(text) or _JUNIT.match(text))


def workspace_files(
    root: Path, var_files: Iterable[Path] = (), bounds: Bounds | None = None
) -> list[Path]:
    """The root file first, then every other workspace file in sorted path order.
    `var_files` (given with --var-file) hold variables: they are not workspace files.
    A file may be a link to a file within `bounds` (the workspace's by default)."""
    bounds = bounds or Bounds.of_workspace(root)
    first = root_file(root)
    ignored = ignore_spec(root)
    variables = {resolved(path) for path in var_files}
    others = []
    nested: set[Path] = set()  # directories that are workspaces of their own
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES):
        relative = path.relative_to(root)
        if path == first or any(part.startswith(".") for part in relative.parts):
            continue
        if relative.parts[0] in (TESTS_DIR, POLICIES_DIR):
            continue
        if _in_nested_workspace(root, relative, nested):
            continue
        if ignored is not None and ignored.match_file(relative.as_posix()):
            continue
        if broken_link(path):  # the loader says so, with the other problems
            others.append(path)
            continue
        if not path.is_file():
            continue
        if bounds.inside(relative.as_posix()) is None:
            raise DiagnosticsError(
                [
                    Diagnostic(
                        bounds.refused(relative.as_posix()),
                        Position(relative.as_posix()),
                    )
                ]
            )
        if resolved(path) in variables or is_artifact(_head(path)):
            continue
        others.append(path)
    return ([first] if first else []) + others


def _in_nested_workspace(root: Path, relative: Path, nested: set[Path]) -> bool:
    """Whether a directory between `root` and the file holds its own root file: an
    export written under the workspace, or another workspace of a monorepo, belongs
    to that workspace and is not read into this one."""
    for parent in list(relative.parents)[:-1]:  # below root, not root itself
        if parent in nested or any((root / parent / name).is_file() for name in ROOT_NAMES):
            nested.add(parent)
            return True
    return False


def _head(path: Path, size: int = 4096) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(size)
    except OSError:
        return ""
