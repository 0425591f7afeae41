"""Agents and profiles, read-only: resolving names (or ids) used in the files."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ReferenceList:
    """name <-> id of one read-only collection."""

    by_name: dict[str, str] = field(default_factory=dict)
    by_id: dict[str, str] = field(default_factory=dict)  # id -> name

    @classmethod
    def from_items(cls, items: list[dict[str, Any]]) -> ReferenceList:
        return cls({i["name"]: i["id"] for i in items}, {i["id"]: i["name"] for i in items})

    def resolve(self, ref: str) -> str | None:
        """An id for a name, or for an id (in any case); None when it names nothing."""
        if ref in self.by_name:
            return self.by_name[ref]
        try:
            canonical = str(uuid.UUID(ref))
        except ValueError:
            return None
        return canonical if canonical in self.by_id else None

    def name_of(self, ref_id: str) -> str:
        return self.by_id.get(ref_id, ref_id)


PATHS = {"profiles": "/profiles", "agents": "/agents"}


class References:
    """Loads each reference list at most once per run, only when a kind needs it."""

    def __init__(self, api: Any = None) -> None:
        self.api = api
        self.lists: dict[str, ReferenceList] = {}

    async def load(self, names: set[str]) -> None:
        missing = sorted(n for n in names if n not in self.lists)
        results = await asyncio.gather(*(self.api.list_all(PATHS[n]) for n in missing))
        for name, items in zip(missing, results, strict=True):
            self.lists[name] = ReferenceList.from_items(items)

    def __getitem__(self, name: str) -> ReferenceList:
        return self.lists.setdefault(name, ReferenceList())
