"""`env diff A B`: the desired state of two environments side by side, offline.

Both environments render the same files; only their names (`env_name`) and their
variables differ, so every difference comes from one or the other. A difference
that the variables explain is what the environments declare per environment (the
expected kind); one that comes from the name (`{% if env_name == 'prod' %}`) is
flagged: it is a change one environment gets and the other does not.

The rule: B's files are rendered a third time, under A's name with B's variables
(B'). An object of B that B' renders the same depends on the name nowhere, so
where it differs from A its variables explain it. Where B' differs from B, the
name decides: flagged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentform.config.loader import Workspace
from agentform.core.gcpause import collector_paused
from agentform.core.sensitive import as_marked
from agentform.kinds import kinds_in_order

FORMAT_VERSION = 1
Status = Literal["vars", "name"]


@dataclass(frozen=True)
class FieldDifference:
    field: str
    a: Any  # JSON, secrets as their ((secret:NAME)) markers; None: absent
    b: Any


@dataclass(frozen=True)
class ObjectDifference:
    id: str  # "KIND/KEY"
    kind: str
    status: Status  # explained by the variables, or decided by the name
    only_in: str | None = None  # the environment holding it, when the other has none
    fields: tuple[FieldDifference, ...] = ()


@dataclass(frozen=True)
class EnvDiff:
    workspace: str
    a: str
    b: str
    same: int
    objects: tuple[ObjectDifference, ...]
    variables: tuple[FieldDifference, ...] = field(default=())  # the vars that differ

    @property
    def flagged(self) -> tuple[ObjectDifference, ...]:
        return tuple(o for o in self.objects if o.status == "name")

    @property
    def expected(self) -> bool:
        """Whether A and B differ only by what each environment declares (its vars)."""
        return not self.flagged


def desired_state(workspace: Workspace) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each declared object by address: its kind and its fields as JSON (secrets as
    markers, so two environments reading the same secret compare equal)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for kind in kinds_in_order():
        for item in workspace.declared[kind.name]:
            data = item.model.model_dump(mode="json", fallback=as_marked)
            out[f"{kind.name}/{kind.key_of(item)}"] = (kind.name, data)
    return out


def compare(a: Workspace, b: Workspace, b_named_a: Workspace) -> EnvDiff:
    """A against B, each difference classified by B rendered under A's name."""
    with collector_paused():  # bulk work, no cycles (core/gcpause.py)
        return _compare(a, b, b_named_a)


def _compare(a: Workspace, b: Workspace, b_named_a: Workspace) -> EnvDiff:
    name_a = a.settings.environment or ""
    name_b = b.settings.environment or ""
    left, right, control = desired_state(a), desired_state(b), desired_state(b_named_a)
    objects = []
    same = 0
    for address in [*left, *(k for k in right if k not in left)]:
        mine, theirs = left.get(address), right.get(address)
        if mine == theirs:
            same += 1
            continue
        status: Status = "name" if control.get(address) != theirs else "vars"
        kind = (mine or theirs or ("", {}))[0]
        only = None if mine and theirs else (name_a if mine else name_b)
        fields = _fields(mine[1] if mine else {}, theirs[1] if theirs else {})
        objects.append(ObjectDifference(address, kind, status, only, fields))
    variables = _fields(a.variables, b.variables)
    return EnvDiff(a.settings.workspace, name_a, name_b, same, tuple(objects), variables)


def _fields(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[FieldDifference, ...]:
    """The top-level fields whose values differ, in the order A then B names them."""
    names = [*a, *(k for k in b if k not in a)]
    return tuple(FieldDifference(n, a.get(n), b.get(n)) for n in names if a.get(n) != b.get(n))
