"""What a resource kind is: its YAML model, how it reads live state, how it diffs,
and which API calls create, update and delete it.

A kind registers itself by being defined (a subclass with a `name`); the
engine, the loader, export and the JSON Schema iterate `Kind.registry`, so a
new kind is one new module and nothing else.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..config.diagnostics import Diagnostics, Position
from .references import References


class DesiredModel(BaseModel):
    """Base of an object as written in YAML: unknown keys refused."""

    model_config = ConfigDict(extra="forbid")
    name: str  # the identity; each kind restates it with its own limits
    ensure: Literal["present", "absent"] = Field(
        "present", description="absent: delete the live object if it exists"
    )


class State(BaseModel):
    """The normalised, comparable form both desired and live objects become.

    For a desired object, `model_fields_set` is what the YAML manages; a field
    left out is not managed and never diffed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str


@dataclass(frozen=True)
class Declared:
    """One desired object with where it was written."""

    model: DesiredModel
    position: Position

    @property
    def key(self) -> str:
        return self.model.name


@dataclass(frozen=True)
class LiveObject:
    key: str
    id: str
    state: State
    raw: dict[str, Any]  # what the API answered (fingerprinted)
    preset: bool = False


class ApiCall(BaseModel):
    """One HTTP call of a change; `{id}` in the path is the object's id, known after create.

    `creates`: the call makes the object and answers its id (a lookup by name may
    adopt it when the answer is lost). `idempotent`: repeating it is harmless, so
    it may be retried even after it may have reached the server.
    """

    model_config = ConfigDict(frozen=True)
    method: str
    path: str
    body: Any = None
    creates: bool = False
    idempotent: bool = False


class FieldChange(BaseModel):
    model_config = ConfigDict(frozen=True)
    field: str
    before: Any = None
    after: Any = None
    added: list[str] | None = None  # for set fields: what is added and removed
    removed: list[str] | None = None
    sensitive: bool = False


@dataclass
class PlanContext:
    """What a kind may consult while turning desired objects into states."""

    references: References
    diagnostics: Diagnostics = field(default_factory=Diagnostics)


class Kind(ABC):
    registry: ClassVar[dict[str, Kind]] = {}

    name: ClassVar[str]  # the YAML list key, e.g. "profilePools"
    label: ClassVar[str]  # for messages, e.g. "pool"
    desired_model: ClassVar[type[DesiredModel]]
    collection: ClassVar[str]  # API path of the collection
    depends_on: ClassVar[tuple[str, ...]] = ()
    references: ClassVar[tuple[str, ...]] = ()  # reference lists it resolves names in
    set_fields: ClassVar[tuple[str, ...]] = ()  # compared as sets
    order: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            Kind.registry[cls.name] = cls()

    # -- offline -------------------------------------------------------------
    def check(self, declared: list[Declared], diagnostics: Diagnostics) -> None:  # noqa: B027
        """Checks inside the files (no API): override for kind-specific rules."""

    def references_needed(self, declared: list[Declared]) -> set[str]:
        """The reference lists (profiles, agents) these declarations name things in."""
        if any(d.model.ensure == "present" for d in declared):
            return set(self.references)
        return set()

    # -- reading -------------------------------------------------------------
    @abstractmethod
    async def read_live(self, api: Any, managed: Container[str]) -> list[LiveObject]:
        """Every live object of the kind; `managed` keys may need a deeper read."""

    # -- planning ------------------------------------------------------------
    @abstractmethod
    def desired_state(self, declared: Declared, ctx: PlanContext) -> State | None:
        """The desired object as a State (names resolved); None after a diagnostic."""

    def diff(self, desired: State, live: State, ctx: PlanContext) -> list[FieldChange]:
        """The managed fields that differ, with values as the user writes them."""
        changes = []
        for name in sorted(desired.model_fields_set - {"name"}):
            want, have = getattr(desired, name), getattr(live, name)
            if want == have:
                continue
            show = lambda v, n=name: self.display(n, v, ctx)  # noqa: E731
            if name in self.set_fields:
                changes.append(
                    FieldChange(
                        field=name,
                        before=show(have),
                        after=show(want),
                        added=show(want - have),
                        removed=show(have - want),
                    )
                )
            else:
                changes.append(FieldChange(field=name, before=show(have), after=show(want)))
        return changes

    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        """A state value as the user writes it (e.g. profile names for ids)."""
        if isinstance(value, frozenset):
            return sorted(value)
        if isinstance(value, tuple):
            return [
                v.model_dump(mode="json", exclude_none=True) if isinstance(v, BaseModel) else v
                for v in value
            ]
        return value

    def required_to_create(self) -> tuple[str, ...]:
        """Fields that may be left out to leave them unmanaged, but are needed to create."""
        return ()

    @abstractmethod
    def create_calls(self, desired: State) -> list[ApiCall]: ...

    @abstractmethod
    def update_calls(
        self, live: LiveObject, desired: State, changed: set[str]
    ) -> list[ApiCall]: ...

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        return [ApiCall(method="DELETE", path=f"{self.collection}/{live.id}")]

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        """A state as the user writes it (names, not ids): name first, then its fields."""
        fields = ["name", *sorted(state.model_fields_set - {"name"})]
        return {name: self.display(name, getattr(state, name), ctx) for name in fields}

    def export(self, live: LiveObject, ctx: PlanContext) -> dict[str, Any]:
        """The YAML of a live object, which plans to no change (empty values left out)."""
        return {k: v for k, v in self.show(live.state, ctx).items() if v is not None}


def kinds_in_order() -> list[Kind]:
    return sorted(Kind.registry.values(), key=lambda k: (k.order, k.name))


def chunks(items: list[str], size: int = 100) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
