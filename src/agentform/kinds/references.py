"""Agents and profiles, read-only: resolving names (or ids) used in the files."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentform.core.errors import UnresolvedSecret
from agentform.core.problems import did_you_mean
from agentform.core.sensitive import Sensitive

if TYPE_CHECKING:  # the event loop's modules: `validate` reads no reference
    import asyncio


@dataclass
class ReferenceList:
    """name <-> id of one read-only collection."""

    by_name: dict[str, str] = field(default_factory=dict)
    by_id: dict[str, str] = field(default_factory=dict)  # id -> name
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> what the API answered

    @classmethod
    def from_items(cls, items: list[dict[str, Any]]) -> ReferenceList:
        return cls(
            {i["name"]: i["id"] for i in items},
            {i["id"]: i["name"] for i in items},
            {i["id"]: i for i in items},
        )

    def resolve(self, ref: str | Sensitive) -> str | None:
        """An id for a name, or for an id (in any case); None when it names nothing."""
        if ref in self.by_name:
            return self.by_name[ref]  # type: ignore[index]
        try:
            canonical = str(uuid.UUID(ref.reveal() if isinstance(ref, Sensitive) else ref))
        except (ValueError, UnresolvedSecret):
            return None
        return canonical if canonical in self.by_id else None

    def name_of(self, ref_id: str) -> str:
        return self.by_id.get(ref_id, ref_id)

    def canonical(self, ref: str) -> str:
        """The name `ref` (a name or an id) stands for; `ref` itself when unknown."""
        found = self.resolve(ref)
        return self.by_id[found] if found is not None else ref

    def suggest(self, ref: object) -> str:
        """' (did you mean 'x'?)' for a close name, or '' (never for a sensitive ref)."""
        if not isinstance(ref, str):
            return ""
        return did_you_mean(ref, self.by_name)


PATHS = {"profiles": "/profiles", "agents": "/agents"}


class References:
    """Loads each reference list at most once per run, only when something needs it;
    readers that need a list wait for the one shared read."""

    def __init__(self, api: Any = None) -> None:
        self.api = api
        self.lists: dict[str, ReferenceList] = {}
        self._reads: dict[str, asyncio.Task[None]] = {}

    async def load(self, names: set[str] | tuple[str, ...]) -> None:
        import asyncio

        await asyncio.gather(*(self._read(n) for n in sorted(set(names))))

    def _read(self, name: str) -> asyncio.Task[None]:
        import asyncio

        if name not in self._reads:
            self._reads[name] = asyncio.ensure_future(self._fetch(name))
        return self._reads[name]

    async def _fetch(self, name: str) -> None:
        self.lists[name] = ReferenceList.from_items(await self.api.list_all(PATHS[name]))

    def __getitem__(self, name: str) -> ReferenceList:
        """The list, or an empty one when it was not loaded (nothing needed it)."""
        return self.lists.get(name) or ReferenceList()
