"""What a kind may consult while reading and planning: references, the live
objects of every kind, the creates planned so far, and the run's options."""

from __future__ import annotations

import uuid
from collections.abc import Container
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentform.core.diagnostics import Diagnostics
from agentform.core.problems import did_you_mean
from agentform.kinds.keys import Key, address
from agentform.kinds.references import References
from agentform.kinds.slots import SENTINEL, pending_id

if TYPE_CHECKING:
    from agentform.kinds.model import LiveObject


@dataclass(frozen=True)
class PlanOptions:
    """Choices of the person running the plan that change what it may do."""

    allow_past_start: bool = False  # create a batch whose startAt has passed
    allow_cancel_running: bool = False  # cancel a running batch that is removed
    now: datetime | None = None  # the current time (tests pass a fixed one)
    targets: tuple[str, ...] = ()  # --target KIND/KEY globs: a partial plan
    excludes: tuple[str, ...] = ()  # --exclude KIND/KEY globs

    def current_time(self) -> datetime:
        return self.now or datetime.now(UTC)


class Everything:
    """A `managed` set that holds every key: export reads every object in depth."""

    def __contains__(self, key: object) -> bool:
        return True


@dataclass
class LiveRead:
    """What `Kind.read_live` gets: the client, which keys to read in depth, and,
    for a child kind, the live parents whose children are managed (by key)."""

    api: Any
    managed: Container[Key]
    references: References
    parents: dict[Key, LiveObject] = field(default_factory=dict)

    @property
    def exhaustive(self) -> bool:
        """Everything is read in depth (export), not only what the files manage."""
        return isinstance(self.managed, Everything)


@dataclass
class PlanContext:
    references: References
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    options: PlanOptions = field(default_factory=PlanOptions)
    live: dict[str, dict[Key, LiveObject]] = field(default_factory=dict)
    creating: set[str] = field(default_factory=set)  # addresses this plan creates
    _ids: dict[str, dict[str, LiveObject]] = field(default_factory=dict)

    def id_of(self, kind: str, key: Key) -> str | None:
        """The live id of kind/key, a pending id when this plan creates it, else None."""
        obj = self.live.get(kind, {}).get(key)
        if obj is not None:
            return obj.id
        where = address(kind, key)
        return pending_id(where) if where in self.creating else None

    def resolve(self, kind: str, ref: str) -> str | None:
        """The id of the object of `kind` named `ref` (a name or an id), or None."""
        found = self.id_of(kind, Key(ref))
        if found is not None:
            return found
        try:
            canonical = str(uuid.UUID(ref))
        except ValueError:
            return None
        return canonical if canonical in self._by_id(kind) else None

    def name_of(self, kind: str, object_id: str) -> str:
        """The key of the object of `kind` with this id (also one this plan creates)."""
        obj = self._by_id(kind).get(object_id)
        if obj is not None:
            return str(obj.key)
        pending = SENTINEL.fullmatch(object_id)
        if pending and pending.group(2).startswith(kind + "/"):
            return pending.group(2).split("/", 1)[1]
        return object_id

    def suggest(self, kind: str, ref: str) -> str:
        """' (did you mean 'x'?)' for a close name of `kind`, or ''."""
        names = [str(k) for k in self.live.get(kind, {})]
        names += [a.split("/", 1)[1] for a in self.creating if a.startswith(kind + "/")]
        return did_you_mean(ref, names)

    def _by_id(self, kind: str) -> dict[str, LiveObject]:
        if kind not in self._ids:
            self._ids[kind] = {o.id: o for o in self.live.get(kind, {}).values()}
        return self._ids[kind]
