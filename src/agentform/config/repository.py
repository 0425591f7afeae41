"""A repository of workspaces (`validate --all DIR...`): every workspace under the
directories, each checked as `validate` checks one, and no two of them owning a
common name in one organization, so a pull request cannot make two workspaces
prune each other's objects.

Two workspaces are in one organization when their endpoints are the same service
and their organizationIds are equal, or either leaves it out (the API key then
chooses the organization, which the files cannot tell: they may be the same).
`endpoint: local` is the embedded service on a database of each workspace
directory and environment (cli/endpoint.py `local_state`), so two local
workspaces, or two environments of one, never share one. Endpoints are compared without their
credentials, case-insensitively in scheme and host, and without a final `/`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentform.config.files import ROOT_NAMES
from agentform.config.owns import shared_names
from agentform.config.settings import Settings
from agentform.core.diagnostics import Diagnostic, Position
from agentform.kinds.order import top_level_kinds

SKIPPED = frozenset({"node_modules", "venv", "__pycache__"})
"""Directories never searched (besides hidden ones: .git, .venv, .agentform...)."""


def find_workspaces(dirs: Iterable[Path]) -> list[Path]:
    """The directories under `dirs` (themselves included) holding an agentform.yaml,
    sorted, each once; hidden directories and SKIPPED are not searched."""
    found: set[Path] = set()
    for top in dirs:
        for folder, subdirs, files in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in SKIPPED)
            if any(name in files for name in ROOT_NAMES):
                found.add(Path(folder).resolve())
    return sorted(found)


@dataclass(frozen=True)
class Member:
    """One workspace of the repository, as the overlap check sees it."""

    name: str  # how messages name it: its directory, relative to where it was run
    root_file: str
    settings: Settings


def _service(member: Member) -> str:
    endpoint = member.settings.endpoint
    if endpoint == "local":  # its own database: one a workspace directory and environment
        return f"local:{member.root_file}\0{member.settings.environment or ''}"
    from agentform.api.endpoint_url import shown_endpoint

    shown = shown_endpoint(endpoint).rstrip("/")
    scheme, sep, rest = shown.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}"


def _same_organization(a: Member, b: Member) -> str | None:
    """How two workspaces share an organization (for the message), or None."""
    if _service(a) != _service(b):
        return None
    first, second = a.settings.organization_id, b.settings.organization_id
    if first and second:
        return f"organization {first}" if first == second else None
    which = "environment" if a.root_file == b.root_file else "workspace"
    return (
        "possibly one organization (without organizationId the API key chooses it; "
        f"give each {which} its organizationId)"
    )


def overlaps(members: list[Member]) -> list[Diagnostic]:
    """An error for each pair of workspaces that may own a common name in one
    organization, naming the globs that overlap."""
    kinds = [k.name for k in top_level_kinds()]
    found = []
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            where = _same_organization(a, b)
            if where is None:
                continue
            shared = shared_names(a.settings.owns, b.settings.owns, kinds)
            if shared:
                from agentform.api.endpoint_url import shown_endpoint

                found.append(
                    Diagnostic(
                        f"workspaces {a.name} and {b.name} both own names on "
                        f"{shown_endpoint(a.settings.endpoint)}, {where}: {'; '.join(shared)} "
                        "(they would prune each other's objects: make their owns disjoint)",
                        Position(b.root_file),
                    )
                )
    return found
