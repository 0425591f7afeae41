"""The data a kind works with: a desired object as written (`DesiredModel`,
`Declared`), the comparable `State` both desired and live objects become, a
`LiveObject` as read, and what planning makes of them (`FieldChange`, `Decision`
with its `ApiCall`s and their `Slot`s, an action's `ActionGoal`). Frozen values,
no behaviour: what a kind does with them is kinds/base.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agentform.core.diagnostics import Position
from agentform.core.frozen import FrozenJson, freeze
from agentform.kinds.keys import Key

Action = Literal["create", "update", "rename", "replace", "cancel", "delete"]


class DesiredModel(BaseModel):
    """Base of an object as written in YAML: unknown keys refused. Its validator is
    built when a file first declares the kind (defer_build): `validate` of a
    workspace of three kinds does not build the other kinds'."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    name: str  # each kind restates it with its own limits
    ensure: Literal["present", "absent"] = Field(
        "present", description="absent: delete the live object if it exists"
    )


class ChildModel(BaseModel):
    """Base of a child object as written inside its parent (no name, no ensure)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class State(BaseModel):
    """The normalised, comparable form both desired and live objects become.

    For a desired object, `model_fields_set` is what the YAML manages; a field
    left out is not managed and never diffed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, defer_build=True)


@dataclass(frozen=True)
class Declared:
    """One desired object with where it was written (and its parent, for a child)."""

    model: BaseModel
    position: Position
    parent: Declared | None = None
    # where a value inside the object was written, by its path in the object
    locate: Callable[[tuple[str | int, ...]], Position] | None = dataclasses.field(
        default=None, compare=False
    )

    @property
    def present(self) -> bool:
        return getattr(self.model, "ensure", "present") == "present"

    def at(self, *path: str | int) -> Position:
        """Where the value at `path` inside the object was written (or its nearest
        enclosing value, or the object)."""
        return self.locate(path) if self.locate is not None and path else self.position


@dataclass(frozen=True)
class LiveObject:
    key: Key
    id: str
    state: State
    raw: dict[str, Any]  # what the API answered (fingerprinted)
    preset: bool = False


class Frozen(BaseModel):
    """Base of every model of a plan: frozen, defaults validated (so frozen too)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, defer_build=True)

    def but(self, **changes: Any) -> Self:
        """A copy with `changes`, validated (model_copy(update=) would not freeze them)."""
        return self.model_validate({**self.__dict__, **changes})


class Slot(Frozen):
    """A place in a call filled in by apply: `at` is ("path", segment) or ("body", *keys).

    `idOf`: the id of the object the change at this address creates (known after
    create). `sensitive`: the name of a sensitive value, taken from the workspace.
    """

    at: tuple[str | int, ...]
    idOf: str | None = None
    sensitive: str | None = None


class ApiCall(Frozen):
    """One HTTP call of a change.

    `creates`: the call makes the object and answers its id (a lookup by key may
    adopt it when the answer is lost). `idempotent`: repeating it is harmless, so
    it may be retried even after it may have reached the server.
    """

    method: str
    path: str
    body: FrozenJson = None
    creates: bool = False
    idempotent: bool = False
    slots: tuple[Slot, ...] = ()


KeyStatus = Literal["added", "removed", "changed", "unchanged"]


class FieldChange(Frozen):
    field: str
    before: FrozenJson = None
    after: FrozenJson = None
    added: FrozenJson = None  # for set fields: what is added and removed
    removed: FrozenJson = None
    sensitive: bool = False
    # sensitive maps: what happens to each key (values are never shown)
    keys: Annotated[dict[str, KeyStatus], AfterValidator(freeze)] | None = None


@dataclass(frozen=True)
class ActionGoal:
    """What an action call (a batch's cancel) is for, as it can be read back: the
    object at `path` (None when gone) is `done` once the action took effect, or
    once it needs none (a batch that completed needs no cancel)."""

    path: str
    done: Callable[[Any], bool]


@dataclass(frozen=True)
class Decision:
    """What to do with one object: an action with its calls, or nothing (and why)."""

    action: Action | None
    reason: str
    calls: tuple[ApiCall, ...] = ()
    warning: str | None = None  # said in the plan when the action cannot be taken
    # said in the plan, though nothing differs that matters: not a change, not drift
    # (a completed batch whose files changed: history, a new run needs a new name)
    note: str | None = None
