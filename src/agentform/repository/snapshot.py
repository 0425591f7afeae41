"""One pair as `affected` compares it: its rendered desired state, its settings and
its tests, each in a canonical form (so a comment, reformatting or a set written
in another order compare equal), and every file it read.

Objects are compared as the plan would see them: the fields the files set (an
unset field is not managed, a field set to its default is), a kind's set fields
(`members`) sorted, secret() values as their `((secret:NAME))` markers (no
secret value is read: the pair is loaded as `validate` loads it).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentform.config.loader import load_workspace
from agentform.config.repository_file import Repository
from agentform.config.settings import Settings
from agentform.core.diagnostics import Position
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.core.secrets import Secrets
from agentform.core.sensitive import as_marked
from agentform.core.yamlpos import parse
from agentform.kinds import kinds_in_order
from agentform.kinds.model import Declared
from agentform.repository.pairs import Pair

TESTS_DIR = "tests"


@dataclass
class Snapshot:
    """A pair loaded from one tree (the working tree, or the base commit's)."""

    root: Path  # the repository's root in that tree
    pair: Pair
    settings: dict[str, Any] = field(default_factory=dict)
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)  # address -> fields
    declared: dict[str, Declared] = field(default_factory=dict)  # address -> where
    tests: dict[str, Any] = field(default_factory=dict)  # file (from the root) -> content
    inputs: frozenset[str] = frozenset()  # files read, named from the root
    problem: str | None = None  # why it did not load

    def where(self, address: str, name: str | None = None) -> str:
        """Where an object (or one of its fields) is written, from the root."""
        declared = self.declared[address]
        return self.shown(declared.at(name) if name else declared.position)

    def shown(self, position: Position) -> str:
        file = posixpath.normpath(f"{self.pair.workspace}/{position.file}")
        return f"{file}:{position.line}" if position.line else file


def settings_of(settings: Settings) -> dict[str, Any]:
    """What a plan of the pair is made against and with."""
    return {
        "workspace": settings.workspace,
        "endpoint": settings.endpoint,
        "organization": settings.organization_id,
        "owns": settings.owns,
        "prune": sorted(settings.prune),
        "protect": {kind: sorted(globs) for kind, globs in settings.protect.items()},
        "moved": [(m.kind, m.source, m.target) for m in settings.moves],
        "apiKeyEnv": settings.api_key_env,
    }


def snapshot(repository: Repository, pair: Pair) -> Snapshot:
    """The pair as its files in `repository`'s tree make it."""
    found = Snapshot(repository.root, pair)
    folder = repository.root / pair.workspace
    try:
        workspace = load_workspace(
            folder, environment=pair.environment, unset_secrets_allowed=True, secrets=Secrets()
        )
    except DiagnosticsError as exc:
        first = exc.diagnostics[0]
        where = found.shown(first.position) + ": " if first.position else ""
        found.problem = f"{where}{first.summary}"
        return found
    except AgentformError as exc:
        found.problem = str(exc)
        return found
    found.settings = settings_of(workspace.settings)
    for kind in kinds_in_order():
        sets = set(kind.set_fields)
        for item in workspace.declared[kind.name]:
            address = f"{kind.name}/{kind.key_of(item)}"
            data = item.model.model_dump(mode="json", fallback=as_marked, exclude_unset=True)
            for name in sets & data.keys():
                data[name] = sorted(data[name], key=repr)
            found.objects[address] = data
            found.declared[address] = item
    inputs = {_named(repository.root, path) for path in workspace.inputs}
    found.tests = tests_of(repository, folder)
    found.inputs = frozenset(inputs | set(found.tests))
    return found


def _named(root: Path, path: Path) -> str:
    return path.resolve().relative_to(root).as_posix()


def tests_of(repository: Repository, folder: Path) -> dict[str, Any]:
    """The workspace's test files and the seeds they name, parsed (a file that does
    not parse compares by its text), by their names from the root."""
    tests = folder / TESTS_DIR
    out: dict[str, Any] = {}
    if not tests.is_dir():
        return out
    bounds = repository.bounds(folder)
    for path in sorted(p for p in tests.rglob("*") if p.suffix in (".yaml", ".yml")):
        if not path.is_file() or any(p.startswith(".") for p in path.relative_to(tests).parts):
            continue
        data = _content(path)
        out[_named(repository.root, path)] = data
        seed = data.get("seed") if isinstance(data, dict) else None
        found = bounds.inside(seed, path.parent) if isinstance(seed, str) else None
        if found is not None and found.is_file():
            out[_named(repository.root, found)] = _content(found)
    return out


def _content(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"unreadable: {exc}"
    try:
        return parse(text).data
    except yaml.YAMLError:
        return text
