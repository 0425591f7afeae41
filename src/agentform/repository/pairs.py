"""The workspaces of a repository and its pairs: a pair is a workspace x one of its
environments (environment None when it declares none), the unit the pipeline
tests, plans, applies and checks for drift.

Workspaces are the directories the `workspaces:` globs name that hold a root
file, each under the repository's root (a glob's `..` or a symlink leading out
names nothing). Directories holding a root file that no glob names are found
too, so validate can say they are left out (a misspelt glob).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentform.config.environments import raw_environments
from agentform.config.files import root_file
from agentform.config.repository import find_workspaces
from agentform.config.repository_file import Repository
from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean


@dataclass(frozen=True, order=True)
class Pair:
    """A workspace (named from the repository's root) in one environment."""

    workspace: str
    environment: str | None = None

    def __str__(self) -> str:
        return (
            self.workspace if self.environment is None else f"{self.workspace} {self.environment}"
        )

    def as_json(self) -> dict[str, str | None]:
        return {"workspace": self.workspace, "environment": self.environment}


def workspace_dirs(repository: Repository) -> list[Path]:
    """Every workspace of the repository: the directories its globs name holding a
    root file, sorted, each once."""
    found: set[Path] = set()
    for glob in repository.globs:
        if ".." in glob.split("/"):
            continue
        for folder in repository.root.glob(glob):
            resolved = folder.resolve()
            if not resolved.is_dir() or not resolved.is_relative_to(repository.root):
                continue
            if any(part.startswith(".") for part in resolved.relative_to(repository.root).parts):
                continue
            if root_file(resolved) is not None and repository.holds(resolved):
                found.add(resolved)
    return sorted(found)


def left_out(repository: Repository, workspaces: list[Path]) -> list[Path]:
    """Directories under the root holding a root file that no glob names."""
    named = set(workspaces)
    return [w for w in find_workspaces([repository.root]) if w not in named]


def environments_of(workspace: Path) -> list[str | None]:
    """The environments a workspace declares, or [None]."""
    path = root_file(workspace)
    names: list[str | None] = [*raw_environments(path)] if path is not None else []
    return names or [None]


def pairs_of(repository: Repository, workspaces: list[Path] | None = None) -> list[Pair]:
    """Every pair of the repository, sorted."""
    out = []
    for workspace in workspace_dirs(repository) if workspaces is None else workspaces:
        name = repository.name_of(workspace)
        out += [Pair(name, environment) for environment in environments_of(workspace)]
    return sorted(out, key=lambda p: (p.workspace, p.environment or ""))


def pairs_under(
    repository: Repository, dirs: list[Path], environment: str | None = None
) -> list[Pair]:
    """The pairs of the repository's workspaces under `dirs` (every workspace when
    there is none), of `environment` alone when one is given: a pipeline's pair job
    loads its own pair, not every workspace of the repository. AgentformError when
    none is there."""
    workspaces = workspace_dirs(repository)
    if dirs:
        under = [d.resolve() for d in dirs]
        workspaces = [w for w in workspaces if any(w.is_relative_to(d) for d in under)]
        if not workspaces:
            shown = ", ".join(str(d) for d in dirs)
            raise AgentformError(f"no workspace of the repository under {shown}")
    found = pairs_of(repository, workspaces)
    if environment is None:
        return found
    chosen = [p for p in found if p.environment == environment]
    if not chosen:
        where = f"under {', '.join(str(d) for d in dirs)} " if dirs else ""
        hint = did_you_mean(environment, {p.environment for p in found if p.environment})
        raise AgentformError(
            f"no workspace of the repository {where}has environment {environment}{hint}"
        )
    return chosen
