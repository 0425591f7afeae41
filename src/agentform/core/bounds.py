"""The bounds of what a workspace may make agentform read: its files are written by
whoever opens a pull request, so each read stays inside the workspace and has a
size a run can afford. The YAML and template bounds live with their parsers
(core/yamlpos.py, config/sandbox.py); these are the ones of files themselves."""

from __future__ import annotations

from pathlib import Path

MAX_FILE_BYTES = 16 << 20
"""A workspace file or an itemsFile (a batch of 10,000 items is far below it)."""


def inside(root: Path, written: str, folder: Path | None = None) -> Path | None:
    """The file `written` names (relative to `folder`, else `root`), symlinks resolved,
    when it is inside the workspace `root`; None when it is not (an absolute path,
    `..` out of it, a symlink leading out)."""
    if Path(written).is_absolute():
        return None
    path = ((folder or root) / written).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def too_large(path: Path) -> str | None:
    """Why `path` is too large to read, or None (a missing file is for the reader)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size > MAX_FILE_BYTES:
        return f"is {size:,} bytes, over the {MAX_FILE_BYTES >> 20} MiB a workspace file may hold"
    return None
