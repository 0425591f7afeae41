"""`agentform init teams/NAME --env staging,prod` inside a repository: the new
workspace's root file, wired to the repository (its settings inherited from the
repository's defaults, `owns:` globs made from its name), refused when its
directory is not one the `workspaces:` globs name, or when its globs overlap
another workspace's (which `validate --all` would refuse later, on a pull request).

The other workspaces' owns are read from their root files as written (top level
and each environment's), without rendering: a root file that does not parse is
left to `validate --all`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from agentform.config.files import root_file
from agentform.config.owns import shared_names
from agentform.config.repository_file import REPOSITORY_FILE, Repository
from agentform.core.errors import AgentformError
from agentform.core.yamlpos import parse
from agentform.kinds.order import top_level_kinds
from agentform.repository.pairs import workspace_dirs

OWNED_BY_NAME = ("profilePools", "profileGroups", "vaultTemplates", "webhooks")
"""The kinds whose names a new workspace owns by its name (`payments-*`). A batch's
key is AGENT/NAME: which agents a team runs is not in its name, so it is left for
the team to add (a commented line)."""


def owns_for(name: str) -> dict[str, list[str]]:
    return {kind: [f"{name}-*"] for kind in OWNED_BY_NAME}


def _written(workspace: Path) -> dict[str, Any]:
    """A workspace's root file as written ({} when it does not parse)."""
    path = root_file(workspace)
    try:
        data = parse(path.read_text(encoding="utf-8")).data if path else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _written_owns(workspace: Path) -> list[dict[str, list[str]]]:
    """The owns a workspace's root file writes: its own and each environment's."""
    data = _written(workspace)
    found = [data.get("owns")]
    environments = data.get("environments")
    if isinstance(environments, dict):
        found += [e.get("owns") for e in environments.values() if isinstance(e, dict)]
    return [_clean(owns) for owns in found if isinstance(owns, dict)]


def _clean(owns: dict[Any, Any]) -> dict[str, list[str]]:
    return {
        str(kind): [str(g) for g in globs if isinstance(g, str)]
        for kind, globs in owns.items()
        if isinstance(globs, list)
    }


def check_new(repository: Repository, directory: Path, name: str) -> None:
    """AgentformError when the directory is not a place for a workspace of the
    repository, or its owns would overlap another workspace's."""
    where = (
        repository.name_of(directory)
        if directory.resolve().is_relative_to(repository.root)
        else str(directory)
    )
    if not repository.holds(directory):
        raise AgentformError(
            f"{where} is not a workspace of the repository: no glob of workspaces: in "
            f"{REPOSITORY_FILE} ({', '.join(repository.globs)}) names it; nothing was written"
        )
    mine = owns_for(name)
    kinds = [k.name for k in top_level_kinds()]
    for other in workspace_dirs(repository):
        if other == directory.resolve():
            continue
        for theirs in _written_owns(other):
            if shared := shared_names(mine, theirs, kinds):
                raise AgentformError(
                    f"a workspace named {name!r} would own names {repository.name_of(other)} "
                    f"owns: {'; '.join(shared)}; choose another name (nothing was written)"
                )


SHARED_PER_ENVIRONMENT = ("endpoint", "organizationId", "apiKeyEnv", "varFiles")
"""What a new workspace's environment takes from the repository's other workspaces
when they all agree (teams splitting one organization per environment)."""


def environment_settings(
    repository: Repository, directory: Path, environment: str
) -> dict[str, Any]:
    """The settings every other workspace declaring `environment` gives it alike;
    var files only from workspaces at the same depth (their paths climb as far)."""
    depth = len(Path(repository.name_of(directory)).parts)
    seen: dict[str, list[Any]] = {key: [] for key in SHARED_PER_ENVIRONMENT}
    for other in workspace_dirs(repository):
        declared = (_written(other).get("environments") or {}).get(environment)
        if other == directory.resolve() or not isinstance(declared, dict):
            continue
        same_depth = len(Path(repository.name_of(other)).parts) == depth
        for key in SHARED_PER_ENVIRONMENT:
            if key in declared and (key != "varFiles" or same_depth):
                seen[key].append(declared[key])
    return {
        key: values[0]
        for key, values in seen.items()
        if values and all(v == values[0] for v in values)
    }


def root_text(
    repository: Repository, directory: Path, name: str, environments: list[str], endpoint: str
) -> str:
    """agentform.yaml of a new workspace of the repository."""
    inherited = ", ".join(sorted(repository.defaults)) or "nothing yet"
    lines = [
        f"workspace: {name}",
        f"# inherited from {REPOSITORY_FILE}'s defaults: {inherited}",
    ]
    if "endpoint" not in repository.defaults:
        lines.append(f"endpoint: {endpoint}")
    lines.append("owns:                 # the names this workspace manages (validate --all)")
    lines += [f'  {kind}: ["{name}-*"]' for kind in OWNED_BY_NAME]
    lines.append(f'  # batches: ["AGENT/{name}-*"]')
    if environments:
        lines.append("environments:   # as the repository's other workspaces declare them")
        for environment in environments:
            given = environment_settings(repository, directory, environment)
            if not given:
                lines.append(f"  {environment}: {{}}   # organizationId:, apiKeyEnv:, varFiles:")
                continue
            lines.append(f"  {environment}:")
            lines += [f"    {key}: {json.dumps(value)}" for key, value in given.items()]
    return "\n".join(lines) + "\n"
