"""A property of `store.pages.read_page` (hypothesis): whatever creates, renames and
deletes happen between two reads, and whichever page, size, order and name filter a
read asks for, its page is exactly the rows sorted and sliced in Python, and its
total their count; whether the read took one query (the order cached, or a first
page holding the whole list) or walked the ordering index again."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentform.service.clock import ManualClock
from agentform.service.errors import ServiceError
from agentform.service.models.profile_sets import ProfileSetCreate, ProfileSetUpdate
from agentform.service.store import profile_sets
from agentform.service.store.database import Database
from agentform.service.store.organizations import ensure_organization
from agentform.service.store.pages import PageParams, PageRequest, Sorting
from agentform.service.store.profile_sets import POOLS
from tests.tiers import examples

ORG = "5f0c9f7e-0000-4000-8000-00000000c001"
# Ties but for case, and text SQLite does not fold (é, É), quotes, a backslash.
NAMES = st.text(alphabet='aAbB_éÉ"\\', min_size=1, max_size=3)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def folded(text: str) -> str:
    """What NOCASE and SQLite's lower() make of text: ASCII letters folded, no others."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class Read:
    page: int
    size: int
    sort: Sorting | None
    search: str | None


READS = st.builds(
    Read,
    page=st.integers(1, 4),
    size=st.sampled_from([1, 2, 3, 100]),
    sort=st.none()
    | st.builds(Sorting, st.sampled_from(["name", "created_at", "updated_at"]), st.booleans()),
    search=st.none() | st.sampled_from(["a", "B", "ab", "é", "É", '"']),
)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), NAMES),
        st.tuples(st.just("rename"), st.integers(0, 50), NAMES),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("tick")),
        st.tuples(st.just("read"), READS),
    ),
    max_size=40,
)


@contextmanager
def database() -> Iterator[tuple[Database, ManualClock]]:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC), settle=0)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "pages.db", now=clock.now)
        with db.write() as conn:
            ensure_organization(conn, ORG, "pages")
        try:
            yield db, clock
        finally:
            db.close()


def expected(rows: list[dict[str, Any]], read: Read) -> tuple[list[str], int]:
    """The page as the contract says it (docs/service/contract.md#lists), in Python."""
    sort = read.sort or Sorting("created_at")
    if read.search:
        rows = [r for r in rows if folded(read.search) in folded(r["name"])]

    def key(r: dict[str, Any]) -> tuple[str, ...]:
        if sort.column == "name":  # folded, then the name, then the id
            return (folded(r["name"]), r["name"], r["id"])
        return (r[sort.column], r["id"])

    ordered = sorted(rows, key=key, reverse=sort.descending)
    start = (read.page - 1) * read.size
    return [r["id"] for r in ordered[start : start + read.size]], len(rows)


def apply(db: Database, clock: ManualClock, step: tuple[Any, ...]) -> None:
    with db.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM profile_sets ORDER BY rowid")]
    with db.write() as conn:
        if step[0] == "create":
            with suppress(ServiceError):  # the name is taken: 409, nothing written
                profile_sets.create_set(conn, POOLS, ORG, ProfileSetCreate(name=step[1]))
        elif step[0] == "rename" and ids:
            body = ProfileSetUpdate(name=step[2])
            with suppress(ServiceError):
                profile_sets.update_set(conn, POOLS, ORG, ids[step[1] % len(ids)], body)
        elif step[0] == "delete" and ids:
            profile_sets.delete_set(conn, POOLS, ORG, ids[step[1] % len(ids)])
    if step[0] == "tick":
        asyncio.run(clock.advance(1))  # no runner: only the timestamps move


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_every_page_is_the_rows_sorted_and_sliced(steps: list[tuple[Any, ...]]) -> None:
    with database() as (db, clock):
        for step in steps:
            if step[0] != "read":
                apply(db, clock, step)
                continue
            read: Read = step[1]
            request = PageRequest(PageParams(read.page, read.size), read.sort, read.search)
            for _ in range(2):  # the second read of a generation is the cached one
                with db.read() as conn:
                    rows = [dict(r) for r in conn.execute("SELECT * FROM profile_sets")]
                    page = profile_sets.list_sets(conn, POOLS, ORG, request)
                assert ([item.id for item in page.items], page.total) == expected(rows, read)
