"""Which test files run, and the seed each runs on: every problem found before any runs.

Without FILE arguments, the tests are the `*.yaml` and `*.yml` files under the
workspace's `tests/` directory (hidden ones aside), in sorted order, and a
directory given is read the same way; a file there that is a seed (an
`organizations` list and no `tests`) is a seed, not a test. A file's `seed:`
is a path relative to that file, inside the workspace, or the seed inline;
without one, the demo seed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import yaml
from pydantic import ValidationError

from agentform.config.files import TESTS_DIR
from agentform.config.loader import Workspace
from agentform.config.repository_file import bounds_of
from agentform.core.bounds import Bounds, broken_link, resolved
from agentform.core.budget import BudgetExceeded, metered
from agentform.core.diagnostics import Diagnostic, Diagnostics, Position, relative
from agentform.core.errors import DiagnosticsError
from agentform.core.problems import problems_from
from agentform.core.yamlpos import parse
from agentform.rules.demo import DEMO_AGENTS
from agentform.testing.model import TestFile
from agentform.testing.parse import LoadedFile, Names, check_names, read_test_file, seed_agents

if TYPE_CHECKING:
    from agentform.service.startup.seed_file import Seed

SUFFIXES = (".yaml", ".yml")
MAX_FILES = 1000


@dataclass(frozen=True)
class TestFileRun:
    """A loaded file with the seed its tests run on."""

    __test__ = False  # not a pytest class

    loaded: LoadedFile
    given: Seed | None  # None: the file names no seed, its tests run on the demo seed
    model: TestFile  # the loaded file's, valid

    @property
    def seed(self) -> Seed:
        """The seed the tests run on (the demo seed is built only when asked for:
        `agentform validate` needs its agents' names alone)."""
        from agentform.service.startup.seed_file import demo_seed  # (the service's)

        return demo_seed() if self.given is None else self.given


# The seed a file's tests run on: "demo" where it names none, None where it is wrong.
_Found: TypeAlias = "Seed | Literal['demo'] | None"


def discover(folder: Path, workspace: Path | None = None) -> list[Path]:
    """The test files under `folder` (the workspace's tests/), seeds aside. A file
    leading out of the bounds of `workspace` is not opened to tell: it is a test file,
    which reading refuses."""
    if not folder.is_dir():
        return []
    limit = bounds_of(resolved(workspace)).limit if workspace is not None else None
    found = []
    listed = (p for p in folder.rglob("*") if p.suffix in SUFFIXES)
    for path in sorted(p for p in listed if p.is_file() or broken_link(p)):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        if (limit is not None and not resolved(path).is_relative_to(limit)) or not _is_seed(path):
            found.append(path)
    return found


def tests_of(root: Path) -> list[Path]:
    """The test files of the workspace at `root` (its tests/, as `discover` reads it);
    DiagnosticsError when tests/ itself leads out of the workspace's bounds: a link
    to / would have every file of the machine walked."""
    folder = root / TESTS_DIR
    bounds = bounds_of(resolved(root))
    if folder.is_dir() and not resolved(folder).is_relative_to(bounds.limit):
        raise DiagnosticsError([Diagnostic(bounds.refused(TESTS_DIR), Position(TESTS_DIR))])
    return discover(folder, root)


def _is_seed(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(1 << 20)
        data = parse(head).data
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "organizations" in data and "tests" not in data


def load_tests(workspace: Workspace, paths: Sequence[Path]) -> list[TestFileRun]:
    """The files, validated, their seeds read and their names checked; DiagnosticsError
    with every problem of every file otherwise."""
    runs, diags = read_tests(workspace.root, paths, workspace_names(workspace))
    diags.raise_if_errors()
    return runs


def workspace_tests(
    root: Path, workspace: Workspace | None, paths: Sequence[Path]
) -> tuple[list[TestFileRun], list[Diagnostic]]:
    """The workspace's test files `paths` (`tests_of`, found once for every
    environment), checked as `agentform test` checks them before running any
    (`agentform validate`), and their problems in order. Without the workspace (it did
    not load), the names it declares are not checked."""
    names = workspace_names(workspace) if workspace is not None else Names(None, None, None, None)
    runs, diags = read_tests(root, paths, names)
    return runs, diags.in_order()


def read_tests(
    root: Path, paths: Sequence[Path], names: Names
) -> tuple[list[TestFileRun], Diagnostics]:
    """The files that are valid, with their seeds, and every problem of every file."""
    root = resolved(root)
    diags = Diagnostics()
    if len(paths) > MAX_FILES:
        diags.error(f"{len(paths)} test files: at most {MAX_FILES} run at once")
        return [], diags
    runs = []
    seeds: dict[Path | None, Seed] = {}
    bounds = bounds_of(root)
    for path in paths:
        try:
            with metered():
                run = _read_one(root, bounds, path, names, diags, seeds)
        except BudgetExceeded as exc:
            diags.error(str(exc), Position(relative(resolved(path), root), 1, 1))
            continue
        if run is not None:
            runs.append(run)
    return runs, diags


def _read_one(
    root: Path,
    bounds: Bounds,
    path: Path,
    names: Names,
    diags: Diagnostics,
    seeds: dict[Path | None, Seed],
) -> TestFileRun | None:
    """One test file and its seed, checked: a test file is a workspace file, so one
    that leads out of the workspace, or of its repository (a symlink), is refused as
    any other is; one that is a link leading nowhere is said so, not skipped."""
    why = broken_link(path)
    if why or not resolved(path).is_relative_to(bounds.limit):
        shown = _as_written(path, root)
        diags.error(why or bounds.refused(shown), Position(shown))
        return None
    loaded = read_test_file(path, relative(resolved(path), root), diags)
    if loaded is None:
        return None
    seed: _Found
    if loaded.model is not None:
        seed = _seed_of(bounds, loaded, diags, seeds)
    else:  # the file has problems: its names are still checked when its seed is known
        raw = loaded.doc.data if isinstance(loaded.doc.data, dict) else {}
        seed = "demo" if raw.get("seed") is None else None
    agents = DEMO_AGENTS if seed == "demo" else None if seed is None else seed_agents(seed)
    check_names(loaded, Names(names.webhooks, names.pools, agents, names.batches), diags)
    if loaded.model is not None and seed is not None:
        return TestFileRun(loaded, None if seed == "demo" else seed, loaded.model)
    return None


def _as_written(path: Path, root: Path) -> str:
    """`path` named from the workspace at `root` (resolved), the links under it as
    written: a refusal names the link, never where it leads."""
    parts = Path(os.path.abspath(path)).parts
    for depth in range(1, len(parts)):
        if resolved(Path(*parts[:depth])) == root:
            return Path(*parts[depth:]).as_posix()
    return relative(resolved(path.parent) / path.name, root)


def workspace_names(workspace: Workspace) -> Names:
    """What the workspace declares that a test may name."""

    def named(kind: str) -> frozenset[str]:
        return frozenset(
            str(getattr(d.model, "name", "")) for d in workspace.declared.get(kind, [])
        )

    batches = frozenset(
        f"{getattr(d.model, 'agent', '')}/{getattr(d.model, 'name', '')}"
        for d in workspace.declared.get("batches", [])
    )
    return Names(named("webhooks"), named("profilePools"), batches=batches)


def _seed_of(
    bounds: Bounds, loaded: LoadedFile, diags: Diagnostics, seeds: dict[Path | None, Seed]
) -> _Found:
    assert loaded.model is not None
    written = loaded.model.seed
    if written is None:
        return "demo"
    # The seed's format (and its script's) only for a file that gives a seed.
    from agentform.service.startup.seed_file import Seed, SeedError, read_seed

    if isinstance(written, dict):
        try:
            return Seed.model_validate(written)
        except ValidationError as exc:
            for p in problems_from(exc, model=Seed):
                diags.error(
                    f"seed.{p.parameter}: {p.detail}", loaded.at("seed", *p.parameter.split("."))
                )
            return None
    path = bounds.inside(written, resolved(loaded.path).parent)
    if path is None:
        diags.error(f"seed {bounds.refused(written)}", loaded.at("seed"))
        return None
    if not path.is_file():  # said plainly: read_seed's own message is a whole diagnostic
        diags.error(f"seed: no file {bounds.name(path)} in {bounds.within}", loaded.at("seed"))
        return None
    if path not in seeds:
        try:
            seeds[path] = read_seed(path)
        except SeedError as exc:
            for line in str(exc).splitlines():
                diags.error(f"seed: {line}", loaded.at("seed"))
            return None
    return seeds[path]
