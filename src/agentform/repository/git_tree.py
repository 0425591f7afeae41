"""The repository as it was at a commit, read from git without touching the
working tree: `git archive` of the repository's directory at the commit,
extracted into a temporary directory with tarfile's `data` filter (no absolute
paths, no link or file leading out of it, no device), removed afterwards.

The commit is resolved with `rev-parse --verify` after `--end-of-options`, so a
reference written like an option (`--output=...`) is a name that does not
exist, never an option of git.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentform.core.errors import AgentformError


class GitError(AgentformError):
    """git could not give the commit asked for."""


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=300
        )
    except FileNotFoundError:
        raise GitError("git is not installed: affected reads the base commit with git") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took over 300 s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]}: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout


def resolve(root: Path, ref: str) -> str:
    """The commit `ref` names, as a full id; a GitError naming what git said."""
    try:
        return (
            _git(root, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
            .decode()
            .strip()
        )
    except GitError:
        raise GitError(
            f"no commit {ref!r} in the git repository of {root} "
            "(fetch it first: actions/checkout needs fetch-depth: 0)"
        ) from None


def _kept(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, a refused member left out (a link leading out of the
    tree is not a file of the repository a workspace may read anyway)."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None


@contextmanager
def tree_at(root: Path, commit: str) -> Iterator[Path | None]:
    """The directory `root` (inside a git working tree) as it was at `commit`, in a
    temporary directory; None when it did not exist then."""
    prefix = _git(root, "rev-parse", "--show-prefix").decode().strip()
    with tempfile.TemporaryDirectory(prefix="agentform-base-") as temporary:
        archive = Path(temporary) / "base.tar"
        paths = [prefix.rstrip("/")] if prefix else []
        try:
            data = _git(root, "archive", "--format=tar", commit, "--", *paths)
        except GitError:
            yield None  # the directory did not exist at the commit
            return
        archive.write_bytes(data)
        out = Path(temporary) / "tree"
        out.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(out, filter=_kept)
        archive.unlink()
        found = out / prefix
        yield found if found.is_dir() else None
