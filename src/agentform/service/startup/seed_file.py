"""The seed file's format: organizations, API keys, agents (with their scripts) and
profiles, read and validated, and the demo seed.

Reading a seed needs no database: `agentform validate` checks the seeds test files
name with this module alone; seed.py writes a seed into the service's store.
"""

from __future__ import annotations

import functools
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentform.core.errors import AgentformError
from agentform.core.problems import problems_from, rule_error
from agentform.core.yamlpos import parse, problem_of
from agentform.rules.demo import DEMO_ADMIN_KEY as DEMO_ADMIN_KEY  # (theirs, named here too)
from agentform.rules.demo import DEMO_AGENT_VERSIONS
from agentform.rules.demo import DEMO_ORGANIZATION_ID as DEMO_ORGANIZATION_ID
from agentform.rules.values import NAME_MAX_LENGTH, unencodable_at
from agentform.service.executions.script import Script


class SeedError(AgentformError):
    """The seed file cannot be loaded: one line a problem, `FILE[:LINE:COL]: error: ...`."""


class _Strict(BaseModel):
    # Built at the first seed read: `agentform validate` of tests on the demo seed
    # needs only its agents' names (rules/demo.py), never these validators.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class SeedKey(_Strict):
    name: Annotated[str, Field(min_length=1)]
    key: Annotated[str, Field(min_length=8)]
    role: Literal["admin", "read"]


class SeedAgent(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH)]
    id: uuid.UUID | None = None
    versions: Annotated[list[int], Field(min_length=1)] = [1]
    publishedVersion: int | None = None
    script: Script | None = None

    @model_validator(mode="after")
    def _published_is_a_version(self) -> SeedAgent:
        if self.publishedVersion is None:
            self.publishedVersion = max(self.versions)
        elif self.publishedVersion not in self.versions:
            raise ValueError(f"publishedVersion {self.publishedVersion} is not in versions")
        return self


class SeedProfile(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH)]
    id: uuid.UUID | None = None
    description: Annotated[str, Field(max_length=1000)] | None = None


class SeedOrganization(_Strict):
    name: Annotated[str, Field(min_length=1)]
    id: uuid.UUID | None = None
    maxConcurrentExecutions: Annotated[int, Field(ge=1)] = 10
    apiKeys: list[SeedKey] = []
    agents: list[SeedAgent] = []
    profiles: list[SeedProfile] = []

    @model_validator(mode="after")
    def _unique_names(self) -> SeedOrganization:
        for what, items in (
            ("apiKeys", self.apiKeys),
            ("agents", self.agents),
            ("profiles", self.profiles),
        ):
            names = [i.name for i in items]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{what}: duplicate names {', '.join(dupes)}")
        return self


class Seed(_Strict):
    organizations: list[SeedOrganization]

    @model_validator(mode="before")
    @classmethod
    def _encodable(cls, data: Any) -> Any:
        """Text UTF-8 cannot encode, anywhere in the file (names, keys, scripts), is
        refused where it is, as the service refuses it in a request."""
        found = unencodable_at(data)
        if found is not None:
            path, problem = found
            parts = tuple(p for p in path.split(".") if p)
            raise rule_error(problem, at=[(parts, problem)])
        return data

    @model_validator(mode="after")
    def _unique(self) -> Seed:
        names = [o.name for o in self.organizations]
        if len(set(names)) != len(names):
            raise ValueError("organizations: duplicate names")
        keys = [k.key for o in self.organizations for k in o.apiKeys]
        if len(set(keys)) != len(keys):
            raise ValueError("apiKeys: the same key is given twice")
        return self


def _demo_scripts() -> Any:
    path = Path(__file__).parents[1] / "executions" / "demo_scripts.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@functools.cache
def demo_seed() -> Seed:
    """The demo seed, read and validated once, when first asked for."""
    scripts = _demo_scripts()
    return Seed.model_validate(
        {
            "organizations": [
                {
                    "name": "demo",
                    "id": DEMO_ORGANIZATION_ID,
                    "apiKeys": [
                        {"name": "admin", "key": DEMO_ADMIN_KEY, "role": "admin"},
                        {"name": "reader", "key": "demo-read-key", "role": "read"},
                    ],
                    "agents": [{**a, "script": scripts[a["name"]]} for a in DEMO_AGENT_VERSIONS],
                    "profiles": [
                        {"name": f"bot-{i}", "description": f"demo profile {i}"}
                        for i in range(1, 7)
                    ],
                }
            ]
        }
    )


if TYPE_CHECKING:
    DEMO_SEED: Seed


def __getattr__(name: str) -> Any:
    """DEMO_SEED is demo_seed(), built when first named (PEP 562)."""
    if name == "DEMO_SEED":
        return demo_seed()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_seed(path: str | Path) -> Seed:
    """Parse and validate a seed file, or raise SeedError naming the problem."""
    try:
        doc = parse(Path(path).read_text())
    except OSError as exc:
        raise SeedError(f"{path}: error: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        problem, line_column = problem_of(exc)
        at = f"{path}:{line_column[0]}:{line_column[1]}" if line_column else str(path)
        raise SeedError(f"{at}: error: not valid YAML: {problem}") from None
    try:
        return Seed.model_validate(doc.data)
    except ValidationError as exc:
        lines = []  # one line a problem, at its position (a problem of the whole file: 1:1)
        for p in problems_from(exc, model=Seed):
            parts = () if p.parameter == "body" else p.parameter.split(".")
            line, column = doc.where(tuple(int(x) if x.isdigit() else x for x in parts))
            what = "file" if p.parameter == "body" else p.parameter
            lines.append(f"{path}:{line}:{column}: error: {what}: {p.detail}")
        raise SeedError("\n".join(lines)) from None
