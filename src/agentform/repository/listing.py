"""`agentform list --all`: every pair of the repository with the service it is
planned against (endpoint, organization) and what it owns, read from the files
offline, each pair loaded as `validate` loads it (no secret value needed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentform.config.loader import load_workspace
from agentform.config.repository_file import Repository
from agentform.config.settings import Settings
from agentform.core.diagnostics import Diagnostic, Position
from agentform.core.errors import AgentformError, DiagnosticsError, InvalidWorkspace
from agentform.core.secrets import Secrets
from agentform.repository.pairs import Pair, pairs_of


@dataclass(frozen=True)
class Listed:
    """One pair, and its settings once loaded."""

    pair: Pair
    settings: Settings

    def as_json(self) -> dict[str, Any]:
        from agentform.api.endpoint_url import shown_endpoint

        return {
            **self.pair.as_json(),
            "workspaceName": self.settings.workspace,
            "endpoint": shown_endpoint(self.settings.endpoint),
            "organizationId": self.settings.organization_id,
            "owns": self.settings.owns,
        }


def load_pair(repository: Repository, pair: Pair) -> Any:
    """The pair's workspace, loaded offline with its own registry of secrets (what
    one workspace leaves unset is never said of another)."""
    return load_workspace(
        repository.root / pair.workspace,
        environment=pair.environment,
        unset_secrets_allowed=True,
        secrets=Secrets(),
    )


def listed(
    repository: Repository, pairs: list[Pair] | None = None
) -> tuple[list[Listed], list[Diagnostic]]:
    """Every pair (or those given) with its settings, and the problems of those that
    do not load (at their files, named from the repository's root). A pair whose
    settings loaded but whose other files have problems is still listed: its
    organization and owns come from agentform.yaml alone."""
    rows: list[Listed] = []
    problems: list[Diagnostic] = []
    for pair in pairs_of(repository) if pairs is None else pairs:
        try:
            rows.append(Listed(pair, load_pair(repository, pair).settings))
        except DiagnosticsError as exc:
            if isinstance(exc, InvalidWorkspace) and isinstance(exc.settings, Settings):
                rows.append(Listed(pair, exc.settings))
            problems += [from_root(d, pair.workspace) for d in exc.diagnostics]
        except AgentformError as exc:
            problems.append(Diagnostic(f"{pair}: {exc}", Position(pair.workspace)))
    return rows, list(dict.fromkeys(problems))


def from_root(diagnostic: Diagnostic, workspace: str) -> Diagnostic:
    """A workspace's diagnostic with its file named from the repository's root."""
    import dataclasses
    import posixpath

    where = diagnostic.position or Position("")
    file = posixpath.normpath(f"{workspace}/{where.file}") if where.file else workspace
    return dataclasses.replace(diagnostic, position=dataclasses.replace(where, file=file))


def owns_text(owns: dict[str, list[str]] | None) -> str:
    if owns is None:
        return "everything"
    return "; ".join(f"{kind}: {', '.join(globs)}" for kind, globs in owns.items()) or "nothing"


def listed_text(rows: list[Listed]) -> str:
    """A table: pair, organization, owns."""
    table = [("WORKSPACE", "ENVIRONMENT", "ORGANIZATION", "OWNS")]
    for row in rows:
        org = row.settings.organization_id or "(the API key's)"
        table.append(
            (row.pair.workspace, row.pair.environment or "-", org, owns_text(row.settings.owns))
        )
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(line[:3], widths, strict=True)) + "  " + line[3]
        for line in table
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Pairs:
    """`list --all`'s document in each of its views."""

    rows: list[Listed]

    def text(self, view: object) -> str:
        return listed_text(self.rows)

    def json(self, view: object) -> str:
        return json.dumps([row.as_json() for row in self.rows], indent=2, ensure_ascii=False) + "\n"
