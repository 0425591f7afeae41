"""Where policy files are and reading them: from the working tree, or from a git ref
without touching the working tree (`plan --policies-from REF`).

Policy files are written by whoever opens a pull request, so they are read as
workspace files are: only `*.yaml`/`*.yml` directly in `policies/`, none through a
symlink leaving the root, none over the workspace file size, at most MAX_FILES.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agentform.config.files import POLICIES_DIR, SUFFIXES
from agentform.config.repository_file import repository_of
from agentform.core.bounds import (
    MAX_FILE_BYTES,
    Bounds,
    broken_link,
    refusal,
    resolved,
    too_large,
)
from agentform.core.errors import AgentformError

MAX_FILES = 200
GIT_TIMEOUT = 30.0  # seconds for one git command on a local repository


@dataclass(frozen=True)
class Source:
    """One policy file: how messages name it (`policies/x.yaml`) and its text; or,
    when it could not be read, why (`problem`), said with the other files' problems."""

    name: str
    text: str
    problem: str | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def policies_root(workspace_root: Path) -> Path:
    """The directory whose `policies/` judges the workspace's plans: the repository's
    root (agentform-repository.yaml) when the workspace is one of its workspaces,
    else the workspace itself."""
    repository = repository_of(workspace_root)
    return repository.root if repository is not None else workspace_root


def policy_folders(workspace_root: Path) -> list[tuple[Path, str]]:
    """The folders of policy files that judge the workspace, with how messages name
    them: the root's `policies/`, and a workspace's own below a repository root."""
    root = resolved(policies_root(workspace_root))
    found = [(root / POLICIES_DIR, POLICIES_DIR)]
    own = resolved(workspace_root)
    if own != root:
        found.append((own / POLICIES_DIR, f"{own.relative_to(root).as_posix()}/{POLICIES_DIR}"))
    return found


def working_tree(workspace_root: Path) -> list[Source]:
    """The policy files that judge the workspace, sorted within each folder."""
    return [
        s for folder, shown in policy_folders(workspace_root) for s in folder_sources(folder, shown)
    ]


def folder_sources(folder: Path, shown_as: str) -> list[Source]:
    """The YAML files directly in `folder` (named `shown_as/NAME` in messages),
    sorted; none when it is not a directory. None may be a link leaving `folder`."""
    if not folder.is_dir():
        return []
    paths = sorted(
        p for p in folder.iterdir() if p.suffix in SUFFIXES and (p.is_file() or p.is_symlink())
    )
    _refuse_too_many(len(paths))
    bounds = Bounds.of_workspace(folder)
    return [_read(path, f"{shown_as}/{path.name}", bounds, shown_as) for path in paths]


def _read(path: Path, shown: str, bounds: Bounds, folder: str) -> Source:
    if (why := broken_link(path)) is not None:
        return Source(shown, "", why)
    if bounds.inside(path.name) is None:
        return Source(shown, "", refusal(shown, f"{folder}/"))
    if (why := too_large(path)) is not None:
        return Source(shown, "", f"the file {why}")
    try:
        return Source(shown, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return Source(shown, "", "not UTF-8 text: not a policy file")
    except OSError as exc:
        return Source(shown, "", f"cannot be read: {exc.strerror or exc}")


def _refuse_too_many(count: int) -> None:
    if count > MAX_FILES:
        raise AgentformError(f"{POLICIES_DIR}/ holds {count} files, over the {MAX_FILES} read")


def at_ref(workspace_root: Path, ref: str) -> list[Source]:
    """The policy files that would judge the workspace as the commit `ref` has them,
    read from git's objects (the working tree is neither read nor changed)."""
    if not ref or ref.startswith("-") or any(c in ref for c in "\n\r\x00"):
        raise AgentformError(f"{ref!r} is not a git ref")
    root = workspace_root
    top = resolved(Path(_git(root, "rev-parse", "--show-toplevel").strip()))
    commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    found: list[Source] = []
    for folder, shown in policy_folders(workspace_root):
        if not folder.is_relative_to(top):
            raise AgentformError(f"{shown}/ is not in the git repository of {root}")
        prefix = folder.relative_to(top).as_posix()
        found += _folder_at(root, commit.strip(), prefix, (ref, shown))
    return found


def _folder_at(root: Path, commit: str, prefix: str, names: tuple[str, str]) -> list[Source]:
    ref, shown_as = names
    listing = _git(root, "ls-tree", "-l", "--full-tree", commit, "--", prefix + "/")
    entries = [line.split(None, 4) for line in listing.splitlines() if line]
    files = [e for e in entries if e[1] == "blob" and Path(e[4]).suffix in SUFFIXES]
    _refuse_too_many(len(files))
    sources = []
    for _mode, _type, obj, size, path in sorted(files, key=lambda e: e[4]):
        shown = f"{shown_as}/{Path(path).name}"
        if int(size) > MAX_FILE_BYTES:
            sources.append(Source(shown, "", f"at {ref}: over the size a workspace file may hold"))
            continue
        sources.append(Source(shown, _git(root, "cat-file", "blob", obj)))
    return sources


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AgentformError(f"cannot run git to read the policies: {exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        detail = why[-1] if why else f"git {args[0]} failed"
        if args[0] == "rev-parse" and "--verify" in args:
            detail = f"{args[-1].removesuffix('^{commit}')} is not a commit of this repository"
        raise AgentformError(f"cannot read the policies from git: {detail}")
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentformError("a policy file at that ref is not UTF-8 text") from None
