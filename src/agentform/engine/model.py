"""The Plan: a frozen, serialisable value that `plan` shows and `apply` executes.

Frozen all the way down: models are frozen, lists are tuples, mappings are
FrozenDicts, so no view or hook can change what apply will do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from agentform.core.errors import AgentformError
from agentform.core.frozen import FrozenJson, freeze
from agentform.core.sensitive import json_safe
from agentform.engine.verdicts import Verdicts
from agentform.kinds.model import Action, ApiCall, FieldChange, Frozen

FORMAT_VERSION = 2
"""The saved plan format: 2 added keys of several parts, replace/cancel, slots and
warnings; a plan of another format is refused."""

ACTIONS: tuple[Action, ...] = ("create", "update", "replace", "cancel", "delete")

StrMap = Annotated[dict[str, str], AfterValidator(freeze)]
MAX_RECORDED_VARS = 1 << 20
"""Bytes of JSON the variables a plan records may take (a plan file is hostile input)."""


def _bounded_vars(value: dict[str, Any]) -> Any:
    for name in value:
        if not name or "." in name:
            raise ValueError(f"{name!r} is not a variable's name")
    if len(json.dumps(value, default=str)) > MAX_RECORDED_VARS:
        raise ValueError(f"the variables take more than {MAX_RECORDED_VARS:,} bytes")
    return freeze(value)


def recordable(variables: dict[str, Any], scrub: Callable[[str], str]) -> dict[str, Any]:
    """The variables a plan records, when none holds a secret's value or the key (a
    `--var token=...` that should have been secret('TOKEN')): refused otherwise,
    naming the variable, never the value. `scrub`: the run's secrets' scrubber."""
    holding = [
        name
        for name, value in variables.items()
        if (text := json.dumps(value, default=str)) != scrub(text)
    ]
    if holding:
        raise AgentformError(
            f"variable {', '.join(sorted(holding))} holds a secret's value (or the API key): "
            "plans record variables, so a secret is read with secret('NAME') instead"
        )
    return variables


Vars = Annotated[
    dict[str, Any], AfterValidator(_bounded_vars), PlainSerializer(json_safe, when_used="json")
]
IntMap = Annotated[dict[str, int], AfterValidator(freeze)]


class Change(Frozen):
    id: str  # the address: "KIND/KEY", KEY in its canonical form
    kind: str
    key: str  # canonical form of the key (kinds.keys.Key)
    action: Action
    reason: str
    liveId: str | None = None
    parent: str | None = None  # a child's parent object, "KIND/KEY"
    changedFields: tuple[FieldChange, ...] = ()
    before: FrozenJson = None
    after: FrozenJson = None
    calls: tuple[ApiCall, ...]
    dependsOn: tuple[str, ...] = ()  # changes that must succeed first


class NoOp(Frozen):
    kind: str
    key: str
    reason: str


class PlanWarning(Frozen):
    """Something the plan will not do although the files ask for it, and why."""

    message: str
    address: str | None = None  # "KIND/KEY" it is about
    position: str | None = None  # file:line:column


class Summary(Frozen):
    create: int = 0
    update: int = 0
    delete: int = 0
    replace: int = 0
    cancel: int = 0
    unchanged: int = 0
    unmanaged: int = 0


class Plan(Frozen):
    formatVersion: int = FORMAT_VERSION
    workspace: str
    environment: str | None = None  # of agentform.yaml's environments, when it has them
    endpoint: str
    organizationId: str
    organizationName: str
    changes: tuple[Change, ...]
    noops: tuple[NoOp, ...] = ()
    # Objects that differ from the files where the plan can do nothing (a batch whose
    # startAt has passed, a started batch): what would make them match, with no calls.
    # Each has a warning saying why; drift counts them, apply never runs them.
    cannotApply: tuple[Change, ...] = ()
    unmanaged: IntMap = {}
    warnings: tuple[PlanWarning, ...] = ()
    summary: Summary
    inputsDigest: str
    inputDigests: StrMap = {}  # file -> its part of inputsDigest (names the files changed)
    fingerprints: StrMap  # "KIND/KEY" -> hash of the live object read, or "absent"
    # kind -> keys read in depth (members, attachments, items), for re-reads; only
    # the kinds the workspace declares (a kind left out is read in depth nowhere)
    reads: Annotated[dict[str, tuple[str, ...]], AfterValidator(freeze)] = {}
    secretDigests: StrMap = {}  # NAME -> salted digest of the value
    secretSalt: str = ""
    targets: tuple[str, ...] = ()  # a partial plan: its --target and --exclude globs
    excludes: tuple[str, ...] = ()
    # What the person planning allowed (--allow-past-start, --allow-cancel-running):
    # apply of the saved plan makes it again with the same allowances.
    allowPastStart: bool = False
    allowCancelRunning: bool = False
    # The template variables the files were rendered with, and the part the command
    # line gave (--var-file, --var): apply of the saved plan renders with the latter
    # again and checks the whole against what the files give now. Never a secret:
    # secret() values are not variables.
    vars: Vars = {}
    varOverrides: Vars = {}
    # What the policies (policies/*.yaml) say of the plan; None when there are none
    policies: Verdicts | None = None

    @model_serializer(mode="wrap")
    def _without_absent_policies(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A plan judged by no policy has no `policies` key (its JSON stays as before)."""
        data = handler(self)
        if self.policies is None and isinstance(data, dict):
            data.pop("policies", None)
        return data

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    @property
    def partial(self) -> bool:
        return bool(self.targets or self.excludes)


def summarise(changes: tuple[Change, ...] | list[Change], **counts: Any) -> Summary:
    """Counts by action; a rename is an update (one PATCH), and the views say how
    many of the updates are renames (`renames`)."""
    by_action = {a: sum(c.action == a for c in changes) for a in ACTIONS}
    by_action["update"] += renames(changes)
    return Summary(**by_action, **counts)


def renames(changes: tuple[Change, ...] | list[Change]) -> int:
    return sum(c.action == "rename" for c in changes)
