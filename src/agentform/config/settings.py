"""A workspace's settings, as its root file (agentform.yaml) gives them: its name,
endpoint and organization, what it prunes, protects and owns, its moves, and the
environment chosen; one the file leaves out is the repository's default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentform.config.moved import Move
from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.secrets import API_KEY_VARIABLE

ROOT_FILE = "agentform.yaml"


@dataclass
class Settings:
    workspace: str
    endpoint: str = "local"
    organization_id: str | None = None
    organization_from: str = f"organizationId in {ROOT_FILE}"  # where the id was given
    prune: list[str] = field(default_factory=list)
    protect: dict[str, list[str]] = field(default_factory=dict)
    owns: dict[str, list[str]] | None = None  # None: everything
    moves: list[Move] = field(default_factory=list)
    environment: str | None = None  # the one chosen (--env), whose overrides these hold
    api_key_env: str = API_KEY_VARIABLE  # the environment variable holding the key


def settings_of(
    model: Any, name: str, diags: Diagnostics, defaults: Mapping[str, Any]
) -> Settings | None:
    """The root file's settings; one it leaves out is the repository's default."""
    if not model.workspace:
        diags.error(
            f"'workspace' (the workspace's name) is required in {ROOT_FILE}", Position(name, 1, 1)
        )
        return None

    def given(key: str) -> Any:
        value = getattr(model, key)
        return defaults.get(key) if value is None else value

    organization = given("organizationId")
    return Settings(
        workspace=model.workspace,
        endpoint=given("endpoint") or "local",
        organization_id=str(organization) if organization else None,
        organization_from=f"organizationId in {ROOT_FILE}"
        if model.organizationId is not None or not organization
        else "defaults.organizationId in the repository's agentform-repository.yaml",
        prune=list(given("prune") or []),
        protect=dict(given("protect") or {}),
        owns=dict(model.owns) if model.owns is not None else None,
    )
