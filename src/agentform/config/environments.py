"""Environments: `environments:` of agentform.yaml, one name per target (staging,
prod), each overriding some of the workspace's settings.

The files are shared; an environment changes only what the table `OVERRIDABLE`
lists, plus its own `vars`, `varFiles` and `apiKeyEnv`. Adding a setting an
environment may override is one entry of that table.

The environments are read from the raw root file before anything is rendered
(as its `vars` are: the variables must be known to render the files), and
checked with positions when the root file is validated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentform.core.bounds import Bounds
from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.core.secrets import API_KEY_VARIABLE
from agentform.core.yamlpos import parse

OVERRIDABLE: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "endpoint": ("endpoint", str),
    "organizationId": ("organization_id", str),
    "prune": ("prune", list),
    "protect": ("protect", dict),
    "owns": ("owns", dict),
}
"""Workspace settings an environment may override: the root file's key -> the
attribute of the loaded Settings and how its validated value becomes one."""

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
KEY_VARIABLE_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
MAX_ENVIRONMENTS = 100
MAX_VAR_FILES = 20
ENV_VARIABLE = "AGENTFORM_ENV"


@dataclass(frozen=True)
class EnvironmentSpec:
    """One environment as written in the raw root file (checked later, with positions)."""

    name: str
    vars: dict[str, Any] = field(default_factory=dict)
    var_files: tuple[str, ...] = ()
    api_key_env: str = API_KEY_VARIABLE


@dataclass(frozen=True)
class Inputs:
    """What a load renders the files with besides the files: the chosen environment,
    the command line's variables, and the name templates see as env_name (the
    environment's; `env diff` renders one environment under another's name)."""

    cli_vars: Mapping[str, Any] = field(default_factory=dict)
    var_files: tuple[Path, ...] = ()
    environment: str | None = None
    template_name: str | None = None


def raw_environments(root_path: Path) -> dict[str, EnvironmentSpec]:
    """`environments:` of agentform.yaml as written; {} when it declares none or the
    file does not parse (its problems are reported when it is validated)."""
    try:
        raw = parse(root_path.read_text(encoding="utf-8")).data or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    declared = raw.get("environments") if isinstance(raw, dict) else None
    if not isinstance(declared, dict):
        return {}
    return {str(name): _spec(str(name), body) for name, body in declared.items()}


def _spec(name: str, body: Any) -> EnvironmentSpec:
    body = body if isinstance(body, dict) else {}
    variables = body.get("vars")
    files = body.get("varFiles")
    key = body.get("apiKeyEnv")
    return EnvironmentSpec(
        name,
        dict(variables) if isinstance(variables, dict) else {},
        tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else (),
        key if isinstance(key, str) and key else API_KEY_VARIABLE,
    )


def selected(
    environments: Mapping[str, EnvironmentSpec], name: str | None, root_file: str
) -> EnvironmentSpec | None:
    """The environment `name` chooses; an AgentformError-worthy message when the
    name is not declared (with did-you-mean), or names one where none are."""
    if name is None:
        return None
    if not environments:
        raise UnknownEnvironment(
            # the variable is set once for a whole pipeline: the message names both
            f"{root_file} declares no environments, but environment {name!r} was chosen "
            "(--env or AGENTFORM_ENV): declare it under environments:, or leave both out"
        )
    if name not in environments:
        names = ", ".join(environments)
        raise UnknownEnvironment(
            f"no environment {name!r} in {root_file} (environments: {names})"
            + did_you_mean(name, list(environments))
        )
    return environments[name]


class UnknownEnvironment(AgentformError):
    """--env names no environment the root file declares."""


def var_file_paths(
    bounds: Bounds, spec: EnvironmentSpec | None, diags: Diagnostics, root_file: str
) -> list[Path]:
    """The var files of the environment, each within the workspace's bounds (a file
    out of them would let a pull request read any file of the machine into the plan)."""
    if spec is None:
        return []
    paths = []
    for written in spec.var_files[:MAX_VAR_FILES]:
        path = bounds.inside(written)
        if path is None:
            diags.error(
                f"environments.{spec.name}.varFiles: {bounds.refused(written)}",
                Position(root_file),
            )
        elif not path.is_file():
            diags.error(
                f"environments.{spec.name}.varFiles: no file {written!r}", Position(root_file)
            )
        else:
            paths.append(path)
    return paths


def every_var_file(bounds: Bounds, environments: Mapping[str, EnvironmentSpec]) -> list[Path]:
    """The var files of all environments: none of them is a workspace file, whichever
    environment is chosen (prod.vars.yaml is not read as files when planning staging)."""
    out = []
    for spec in environments.values():
        for written in spec.var_files[:MAX_VAR_FILES]:
            path = bounds.inside(written)
            if path is not None:
                out.append(path)
    return out


def override(settings: Any, model: Any, spec: EnvironmentSpec, root_file: str) -> None:
    """The chosen environment's settings over the workspace's `settings` (the root
    file's `model`, validated already)."""
    settings.environment = spec.name
    settings.api_key_env = spec.api_key_env
    chosen = (model.environments or {}).get(spec.name)
    if chosen is None:
        return
    for key in chosen.model_dump(exclude_unset=True, exclude_none=True):
        if key in OVERRIDABLE:
            attribute, convert = OVERRIDABLE[key]
            setattr(settings, attribute, convert(getattr(chosen, key)))
    if "organizationId" in chosen.model_fields_set and chosen.organizationId is not None:
        settings.organization_from = f"environments.{spec.name}.organizationId in {root_file}"
