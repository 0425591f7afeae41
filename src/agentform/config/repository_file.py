"""`agentform-repository.yaml`: a repository of workspaces, declared at its root.

    workspaces: [teams/*]          # globs of workspace directories, from the root
    defaults:                      # settings every workspace inherits unless it
      allowEnv: [CI_COMMIT]        # sets its own (agentform.yaml's keys)
      protect: {profilePools: [prod-*]}

A workspace finds its repository by walking up from its directory; it belongs to
it when one of the globs names its directory. Without one, everything behaves as
before. A workspace of a repository may name files anywhere under the root
(core/bounds.py decides): shared includes, macros, itemsFiles, var files, seeds.
The file is written by whoever opens a pull request, as workspace files are: it
is parsed with the same bounded YAML reader and validated with positions.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticCustomError

from agentform.core.bounds import Bounds, too_large
from agentform.core.diagnostics import Diagnostic, Diagnostics, Position
from agentform.core.errors import DiagnosticsError
from agentform.core.problems import did_you_mean
from agentform.core.yamlpos import parse, problem_of

REPOSITORY_FILE = "agentform-repository.yaml"
INHERITED = ("endpoint", "organizationId", "prune", "protect", "allowEnv")
"""The settings of agentform.yaml a repository's `defaults:` may give."""
MAX_WORKSPACE_GLOBS = 100


def _glob(glob: str) -> str:
    """A glob names directories under the root: no `.` or `..` part, and one `**` at
    most (each more would multiply the directories walked: a pull request's file
    must not make every validate walk the tree over and over)."""
    parts = glob.split("/")
    if any(part in (".", "..", "") for part in parts):
        raise PydanticCustomError("glob", "a workspace glob names directories under the root")
    if parts.count("**") > 1:
        raise PydanticCustomError("glob", "a workspace glob holds one ** at most")
    return glob


WorkspaceGlob = Annotated[
    str, Field(min_length=1, max_length=255, pattern=r"^[^/]"), AfterValidator(_glob)
]


@lru_cache(maxsize=1)
def repository_model() -> type[BaseModel]:
    from agentform.config.document import settings_fields
    from agentform.kinds.order import top_level_kinds

    kind_name: Any = Literal[tuple(k.name for k in top_level_kinds())]
    every = settings_fields(kind_name)
    defaults = create_model(
        "RepositoryDefaults",
        __config__=ConfigDict(extra="forbid"),
        **{name: every[name] for name in INHERITED},
    )
    return create_model(
        "RepositoryFile",
        __config__=ConfigDict(extra="forbid", title="agentform repository file"),
        workspaces=(
            Annotated[list[WorkspaceGlob], Field(min_length=1, max_length=MAX_WORKSPACE_GLOBS)],
            Field(description="Globs of workspace directories, from the repository's root"),
        ),
        defaults=(defaults | None, Field(None, description="Settings workspaces inherit")),
    )


@dataclass(frozen=True)
class Repository:
    """A repository read from its file: its root, globs and defaults (as validated)."""

    root: Path  # resolved
    globs: tuple[str, ...]
    defaults: dict[str, Any] = field(default_factory=dict)  # INHERITED keys it sets

    @property
    def file(self) -> Path:
        return self.root / REPOSITORY_FILE

    def name_of(self, workspace: Path) -> str:
        """A workspace directory as the repository names it (`teams/payments`)."""
        return workspace.resolve().relative_to(self.root).as_posix() or "."

    def holds(self, workspace: Path) -> bool:
        """Whether one of the globs names the workspace directory."""
        resolved = workspace.resolve()
        if not resolved.is_relative_to(self.root):
            return False
        name = self.name_of(resolved)
        return any(glob_matches(glob, name) for glob in self.globs)

    def bounds(self, workspace: Path) -> Bounds:
        return Bounds(workspace.resolve(), self.root)


def glob_matches(glob: str, name: str) -> bool:
    """Whether a workspace glob names a directory: part by part (`*` stays within a
    part; a part `**` is any number of parts)."""
    return _parts_match(tuple(glob.split("/")), tuple(name.split("/")))


@lru_cache(maxsize=4096)  # each (glob rest, name rest) once: `**/**/…` stays polynomial
def _parts_match(glob: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not glob:
        return not parts
    if glob[0] == "**":
        return any(_parts_match(glob[1:], parts[i:]) for i in range(len(parts) + 1))
    return (
        bool(parts) and fnmatch.fnmatchcase(parts[0], glob[0]) and _parts_match(glob[1:], parts[1:])
    )


def find_repository(start: Path) -> Repository | None:
    """The repository whose file is in `start` or the nearest directory above it;
    None when there is none. A DiagnosticsError when its file is not valid."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / REPOSITORY_FILE).is_file():
            return read_repository(folder)
    return None


def repository_of(workspace: Path) -> Repository | None:
    """The repository the workspace belongs to (its globs name it), or None."""
    found = find_repository(workspace)
    return found if found is not None and found.holds(workspace) else None


def bounds_of(workspace: Path) -> Bounds:
    """What the workspace's files may name (core/bounds.py)."""
    found = repository_of(workspace)
    return found.bounds(workspace) if found is not None else Bounds.of_workspace(workspace)


def read_repository(root: Path) -> Repository:
    """The repository file of `root`, validated; a DiagnosticsError with each problem
    at its line."""
    root = root.resolve()
    path = root / REPOSITORY_FILE
    diags = Diagnostics()
    data = _parsed(path, diags)
    if data is not None:
        try:
            model: Any = repository_model().model_validate(data.data)
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple(err["loc"])
                line, column = data.where(loc) if loc else (1, 1)
                where = ".".join(str(p) for p in loc)
                message = err["msg"]
                if err["type"] == "extra_forbidden":
                    keys = ["workspaces", "defaults"] if len(loc) == 1 else list(INHERITED)
                    message = "unknown key" + did_you_mean(str(loc[-1]), keys)
                diags.error(f"{where}: {message}", Position(REPOSITORY_FILE, line, column))
        else:
            defaults = model.defaults.model_dump(exclude_unset=True) if model.defaults else {}
            return Repository(root, tuple(model.workspaces), defaults)
    raise DiagnosticsError(diags.errors or [Diagnostic("not valid", Position(REPOSITORY_FILE))])


def _parsed(path: Path, diags: Diagnostics) -> Any:
    if why := too_large(path):
        diags.error(why, Position(REPOSITORY_FILE))
        return None
    try:
        located = parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        diags.error(f"not UTF-8 text (byte {exc.start})", Position(REPOSITORY_FILE))
        return None
    except OSError as exc:
        diags.error(f"cannot read it ({exc.strerror or exc})", Position(REPOSITORY_FILE))
        return None
    except yaml.YAMLError as exc:
        message, at = problem_of(exc)
        diags.error(f"invalid YAML: {message}", Position(REPOSITORY_FILE, *(at or (0, 0))))
        return None
    if not isinstance(located.data, dict):
        diags.error("a mapping with workspaces: is expected", Position(REPOSITORY_FILE, 1, 1))
        return None
    return located
