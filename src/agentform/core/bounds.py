"""The bounds of what a workspace may make agentform read: its files are written by
whoever opens a pull request, so each read stays inside the workspace and has a
size a run can afford. The YAML and template bounds live with their parsers
(core/yamlpos.py, config/sandbox_bounds.py); these are the ones of files themselves.

`Bounds` is the one place that decides what a path written in a workspace may
name: files under the workspace, or, for a workspace of a repository
(`agentform-repository.yaml`, config/repository_file.py), files anywhere under
the repository's root, reached with `..`. Never outside it, never through a
symlink that leads out of it."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 16 << 20
"""A workspace file or an itemsFile (a batch of 10,000 items is far below it)."""
NOT_ALLOWED = "not allowed in workspace files"


def leads_outside(written: str, within: str) -> str:
    """The one wording of every refusal of a path that leads out of its bounds (by
    `..`, as an absolute path, or through a symlink): an include, an itemsFile, a var
    file, a test's seed; a workspace, test or policy file that is a link. It names the
    path as written (the link), never where it leads."""
    return f"'{written}' leads outside {within}"


def refusal(written: str, within: str) -> str:
    """`leads_outside`, said as the refusal it is."""
    return f"{leads_outside(written, within)}: {NOT_ALLOWED}"


@dataclass(frozen=True)
class Bounds:
    """What the files of the workspace at `workspace` may name: files under `limit`
    (the repository's root, or the workspace itself outside a repository)."""

    workspace: Path  # resolved; names are written from it
    limit: Path  # resolved; every file read is under it

    @classmethod
    def of_workspace(cls, root: Path) -> Bounds:
        """The bounds of a workspace outside any repository: itself."""
        root = resolved(root)
        return cls(root, root)

    @property
    def within(self) -> str:
        """How messages name the limit."""
        return "the workspace" if self.limit == self.workspace else "the repository"

    def inside(self, written: str, folder: Path | None = None) -> Path | None:
        """The file `written` names (relative to `folder`, else the workspace), symlinks
        resolved, when it is under the limit; None when it is not (an absolute path,
        `..` out of it, a symlink leading out)."""
        if Path(written).is_absolute():
            return None
        path = resolved((folder or self.workspace) / written)
        return path if path.is_relative_to(self.limit) else None

    def refused(self, written: str) -> str:
        """Why `written`, which `inside` refused, is not read (`refusal`)."""
        return refusal(written, self.within)

    def name(self, path: Path) -> str:
        """How the files name `path`: from the workspace, with `..` for a file of the
        repository outside it (`../../common/alerts.j2`)."""
        path = resolved(path)
        if path.is_relative_to(self.workspace):
            return path.relative_to(self.workspace).as_posix()
        return Path(os.path.relpath(path, self.workspace)).as_posix()

    def shared(self, name: str) -> bool:
        """Whether a file named as `name` (by `name()`) lies outside the workspace."""
        return name == ".." or name.startswith("../")


def resolved(path: Path) -> Path:
    """`path` absolute, its symlinks resolved, never raising: `Path.resolve()` raises
    RuntimeError on a link loop (`ln -s self.yaml self.yaml`), which a pull request
    can write. A loop is left as the link itself, under the folder holding it, and
    `broken_link` says so at its file."""
    return Path(os.path.realpath(path))


def broken_link(path: Path) -> str | None:
    """Why `path` cannot be read when it is a link leading nowhere (a file linked
    from a checkout CI did not make, or a loop of links), or None: such a file is a
    problem, never skipped, or the rules and objects it holds would silently not count."""
    if not path.is_symlink():
        return None
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a link loop (the link leads back to itself)"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "a link to a file that does not exist"
    return None


def too_large(path: Path) -> str | None:
    """Why `path` is too large to read, or None (a missing file is for the reader)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size > MAX_FILE_BYTES:
        return f"is {size:,} bytes, over the {MAX_FILE_BYTES >> 20} MiB a workspace file may hold"
    return None


# The budget: what one untrusted file (a workspace file with its includes and
# itemsFiles, a test file with its inline seed, one agent script's rendering) may
# make agentform compute, whatever it does. The early refusals of config/sandbox_bounds.py
# and core/yamlpos.py say more precisely what went wrong; this is the floor under them.
BUDGET_MEMORY = 512 << 20
"""Bytes of address space one file's computation may add to the process."""
BUDGET_CPU_SECONDS = 10.0
"""Processor seconds one file's computation may use."""
BUDGET_WALL_SECONDS = 60.0
"""Seconds on the wall clock, whatever the processor does meanwhile: a stall (the
machine swapping, a C call the timers cannot stop in the service's worker) rather
than work, which the processor budget bounds; a CI machine shared by many jobs
gives a file less than its share of the wall clock."""
