"""What a resource kind is: its YAML model, its key, how it reads live state, how
it diffs, and which API calls create, update, replace, cancel and delete it. The
data it works with (`DesiredModel`, `State`, `Declared`, `LiveObject`, `ApiCall`,
`Decision`, ...) is kinds/model.py.

A kind registers itself by being defined (a subclass with a `name`), and the
`agentform.kinds` package imports every module in it, so no list of kinds is
edited anywhere: the engine, the loader, export and the JSON Schema iterate
`Kind.registry`. A child kind (`parent` set) is written inside its parent's
YAML (the parent's `children` field) but is an object of its own in the API:
it diffs, plans and applies as changes of its own.

Adding a kind takes, on the provisioner side, exactly this:

1. `kinds/<kind>.py`: a `Kind` subclass setting `name` (its list's key in the
   YAML), `label`, `summary` (what its list holds), `collection` and
   `desired_model`, with `field_docs` for each field its models give no
   `Field(description=...)` (`agentform schema` refuses a field without one),
   and implementing `read_live`, `desired_state`, `create_calls` and
   `update_calls`; everything else has a default to override. A kind naming
   another kind's objects lists it in `depends_on`. Helpers shared by kinds may
   sit beside them: a module that defines no named `Kind` registers nothing.
2. `rules/<kind>.py`: the limits and rules the service enforces too (lengths,
   enums, rules between fields), written once and imported by both halves.
3. Tests: golden cases `tests/cases/<kind>/NNN-name/desired.yaml` (optionally
   live.json, env.json, options.json, files/), their expected plan.txt,
   plan.json and plan.md written by `UPDATE_GOLDEN=1 pytest
   tests/provisioner/test_golden.py` (read them); the kind added to the list
   in tests/provisioner/test_kind_discovery.py, and its file to the files
   export writes in tests/test_cli.py (one per kind).
4. `make schemas`: the JSON Schema in schemas/ is generated from the kinds, and
   a test fails while it is stale.

No other file changes: a saved plan lists only the kinds its files declare
(`Plan.reads`), so no existing golden plan moves, unless the test service's
seed already holds objects of the new kind (then every plan rightly counts
them as not managed). The service's half (its routes, store and migration for
the new collection) is the service's own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from agentform.core.bounds import Bounds
from agentform.core.diagnostics import Diagnostics
from agentform.core.errors import ApiError
from agentform.core.sensitive import Sensitive
from agentform.kinds.context import LiveRead, PlanContext, PlanOptions
from agentform.kinds.keys import Key
from agentform.kinds.model import (
    ActionGoal,
    ApiCall,
    Decision,
    Declared,
    FieldChange,
    LiveObject,
    State,
)
from agentform.kinds.references import References
from agentform.kinds.slots import SENSITIVE
from agentform.kinds.values import holds, plain, sensitive_map_change

# The JSON Schema text of a field whose model carries none: a description and
# examples (possibly none), by "Model.field".
FieldDocs = dict[str, tuple[str, list[Any]]]


class Kind(ABC):
    registry: ClassVar[dict[str, Kind]] = {}

    name: ClassVar[str]  # the YAML list key, e.g. "profilePools"
    label: ClassVar[str]  # for messages, e.g. "pool"
    summary: ClassVar[str]  # what its list in a workspace file holds (a child kind: none)
    field_docs: ClassVar[FieldDocs] = {}  # for the fields its models describe nowhere
    desired_model: ClassVar[type[BaseModel]]
    collection: ClassVar[str]  # API path of the collection
    depends_on: ClassVar[tuple[str, ...]] = ()  # kinds whose objects this one names
    parent: ClassVar[str | None] = None  # a child kind: written inside this kind's YAML
    children: ClassVar[dict[str, str]] = {}  # desired field -> child kind written in it
    identity_fields: ClassVar[tuple[str, ...]] = ("name",)  # shown first, never diffed
    key_references: ClassVar[tuple[str, ...]] = ()  # reference lists the key is resolved in
    references: ClassVar[tuple[str, ...]] = ()  # reference lists it resolves names in
    set_fields: ClassVar[tuple[str, ...]] = ()  # compared as sets
    sensitive_fields: ClassVar[tuple[str, ...]] = ()  # maps of digests of sensitive values
    # Why a `moved` entry cannot rename its objects in place (the API has no PATCH of
    # the name), or "" when update_calls with "name" changed renames one.
    not_renamable: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            known = Kind.registry.get(cls.name)
            if known is not None and _defined_at(type(known)) != _defined_at(cls):
                raise TypeError(
                    f"two kinds are named {cls.name!r}: {_defined_at(type(known))} "
                    f"and {_defined_at(cls)}"
                )
            Kind.registry[cls.name] = cls()

    # -- identity ------------------------------------------------------------
    def key_of(self, declared: Declared, references: References | None = None) -> Key:
        """The key of a declared object: as written without `references`, canonical
        (names for ids) with them."""
        return Key(getattr(declared.model, "name"))  # noqa: B009

    def parent_key(self, key: Key) -> Key:
        """For a child kind: the key of the parent object `key` belongs to."""
        raise NotImplementedError(f"{self.name} is not a child kind")

    def under_parent(self, key: Key, parent: Key) -> Key:
        """For a child kind: `key` as the child of `parent` (its parent renamed)."""
        raise NotImplementedError(f"{self.name} is not a child kind")

    async def find_created(self, api: Any, key: Key, body: Any) -> Any:
        """The live object a create made, when its answer was lost (None if absent)."""
        items = await api.list_all(self.collection, {"searchName": key[0]})
        return next((i for i in items if i["name"] == key[0]), None)

    def created_differs(self, body: dict[str, Any], found: dict[str, Any]) -> list[str]:
        """The fields of a create's (or update's) `body` that the live object `found`
        does not hold, by name (never values): what stops a live object of the key
        from being adopted as this create's. Fields the API does not answer are not
        compared."""
        return sorted(
            k
            for k, v in body.items()
            if v is not None and k in found and not self.created_holds(k, v, found)
        )

    def created_holds(self, field: str, asked: Any, found: dict[str, Any]) -> bool:
        """Whether the live object `found` holds what `asked` says of `field`; a kind
        whose answers hold a field differently (digests for values, the service's
        own time format) overrides this for that field."""
        return holds(asked, found[field])

    async def read_back(self, api: Any, path: str) -> Any:
        """The object at `path` as it is live, or None when there is none: how the
        goal of a write to `path` is read back after its answer was lost (goals.py).
        A kind whose objects have no GET of their own overrides this."""
        try:
            return await api.request("GET", path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def action_goal(self, call: ApiCall, path: str) -> ActionGoal | None:
        """For a call that acts on an object rather than writing it (a batch's
        cancel, sent to `path`): where the object is read back, and what it must
        then show. None for creates, updates, deletes and member changes: goals.py
        knows those."""
        return None

    # -- offline -------------------------------------------------------------
    def expand(
        self, declared: Declared, folder: Path, bounds: Bounds, diagnostics: Diagnostics
    ) -> tuple[Declared, list[tuple[Path, bytes]]]:
        """The declaration with the files it names read in (a batch's itemsFile, relative
        to `folder`, the YAML file's own, and within the workspace's `bounds`), and the files
        read with their bytes: they are inputs of the plan like the YAML's."""
        return declared, []

    def check(self, declared: list[Declared], diagnostics: Diagnostics) -> None:  # noqa: B027
        """Checks inside the files (no API): override for kind-specific rules."""

    def references_needed(self, declared: list[Declared]) -> set[str]:
        """The reference lists (profiles, agents) these declarations name things in."""
        if any(d.present for d in declared):
            return {*self.references, *self.key_references}
        return set()

    def sensitive_values(self, declared: list[Declared]) -> dict[str, str | Sensitive]:
        """Sensitive values of the declarations, by the name their slots use."""
        return {}

    # -- reading -------------------------------------------------------------
    def read_in_depth(self, declared: Declared) -> bool:
        """Whether planning this present object needs read_live's deeper read of it.

        Kinds with parts read one call per object (members) override this to read
        them only when the files manage those parts."""
        return True

    @abstractmethod
    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        """Every live object of the kind; `read.managed` keys may need a deeper read."""

    # -- planning ------------------------------------------------------------
    @abstractmethod
    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        """The desired object as a State (names resolved, compared against `live`
        when it exists); None after a diagnostic."""

    def diff(self, desired: State, live: LiveObject, ctx: PlanContext) -> list[FieldChange]:
        """The managed fields that differ, with values as the user writes them."""
        changes = []
        for name in sorted(desired.model_fields_set - set(self.identity_fields)):
            change = self.diff_field(name, getattr(desired, name), getattr(live.state, name), ctx)
            if change is not None:
                changes.append(change)
        return changes

    def diff_field(self, name: str, want: Any, have: Any, ctx: PlanContext) -> FieldChange | None:
        """How one managed field changes, or None when it does not."""
        if name in self.sensitive_fields:
            return sensitive_map_change(name, want, have)
        if want == have:
            return None
        if name in self.set_fields:
            return FieldChange(
                field=name,
                before=self.display(name, have, ctx),
                after=self.display(name, want, ctx),
                added=self.display(name, want - have, ctx),
                removed=self.display(name, have - want, ctx),
            )
        return FieldChange(
            field=name, before=self.display(name, have, ctx), after=self.display(name, want, ctx)
        )

    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        """A state value as the user writes it (e.g. profile names for ids)."""
        if field in self.sensitive_fields and isinstance(value, dict):
            return {k: SENSITIVE for k in sorted(value)}
        return plain(value)

    def stale_reason(
        self, action: str, calls: tuple[ApiCall, ...], options: PlanOptions
    ) -> str | None:
        """Why a saved change must not be applied now although nothing live moved
        (time passed since the plan), or None."""
        return None

    def required_to_create(self) -> tuple[str, ...]:
        """Fields that may be left out to leave them unmanaged, but are needed to create."""
        return ()

    def decide_create(self, desired: State, ctx: PlanContext, declared: Declared) -> Decision:
        return Decision("create", "not in live", tuple(self.create_calls(desired)))

    def decide_update(
        self, live: LiveObject, desired: State, changes: list[FieldChange], ctx: PlanContext
    ) -> Decision:
        names = [c.field for c in changes]
        reason = (
            f"field {names[0]} differs" if len(names) == 1 else f"fields {', '.join(names)} differ"
        )
        return Decision("update", reason, tuple(self.update_calls(live, desired, set(names))))

    def decide_delete(self, live: LiveObject, reason: str, ctx: PlanContext) -> Decision:
        return Decision("delete", reason, tuple(self.delete_calls(live)))

    @abstractmethod
    def create_calls(self, desired: State) -> list[ApiCall]: ...

    @abstractmethod
    def update_calls(
        self, live: LiveObject, desired: State, changed: set[str]
    ) -> list[ApiCall]: ...

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        return [ApiCall(method="DELETE", path=f"{self.collection}/{live.id}")]

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        """A state as the user writes it (names, not ids): identity first, then its fields."""
        first = [f for f in self.identity_fields if f in state.model_fields_set]
        fields = [*first, *sorted(state.model_fields_set - set(self.identity_fields))]
        return {name: self.display(name, getattr(state, name), ctx) for name in fields}

    def exports(self, live: LiveObject) -> bool:
        """Whether export writes this live object (finished batches are history)."""
        return True

    def export(
        self, live: LiveObject, ctx: PlanContext, children: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any]:
        """The YAML of a live object (with its children's YAML under their fields),
        which plans to no change; empty values left out."""
        out = {k: v for k, v in self.show(live.state, ctx).items() if v is not None}
        for field, child_kind in self.children.items():
            if children.get(child_kind):
                out[field] = children[child_kind]
        return out


def _defined_at(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
