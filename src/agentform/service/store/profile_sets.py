"""Agent profile pools and profile groups
(docs/service/contract.md#profile-pools-and-profile-groups): one table, two collections.

A `Collection` names which one; a pool id looked up as a group is simply not
found. Members are profiles; member changes are idempotent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from agentform.service.errors import conflict
from agentform.service.models.pages import Page
from agentform.service.models.profile_sets import (
    Member,
    ProfileSet,
    ProfileSetCreate,
    ProfileSetUpdate,
)
from agentform.service.store.batches import live_batch_naming
from agentform.service.store.common import RowModel, fetch_owned, fetch_row, unique_name
from agentform.service.store.database import Conn, new_id
from agentform.service.store.pages import PageParams, PageRequest, read_page
from agentform.service.store.profiles import existing_profile_ids


@dataclass(frozen=True)
class Collection:
    kind: str  # the `collection` column
    label: str  # how messages name one


POOLS = Collection("pool", "pool")
GROUPS = Collection("group", "profile group")

COLUMNS = {
    "name": "name",
    "selectionStrategy": "selection_strategy",
    "allowConcurrentUse": "allow_concurrent_use",
}


# allowConcurrentUse is an INTEGER column, 0 or 1: pydantic reads those as a bool.
set_from_row = RowModel(ProfileSet)
member_from_row = RowModel(Member)


def _owned(conn: Conn, of: Collection, org_id: str, set_id: object) -> sqlite3.Row:
    return fetch_owned(
        conn, "profile_sets", set_id, org_id, of.label, "AND collection = ?", (of.kind,)
    )


def list_sets(conn: Conn, of: Collection, org_id: str, request: PageRequest) -> Page[ProfileSet]:
    return read_page(
        conn,
        "profile_sets",
        "collection = ? AND organization_id = ?",
        [of.kind, org_id],
        request,
        set_from_row,
    )


def get_set(conn: Conn, of: Collection, org_id: str, set_id: object) -> ProfileSet:
    return set_from_row(_owned(conn, of, org_id, set_id))


def create_set(conn: Conn, of: Collection, org_id: str, body: ProfileSetCreate) -> ProfileSet:
    set_id, now = new_id(), conn.now_iso()
    with unique_name(of.label, body.name):
        conn.execute(
            "INSERT INTO profile_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                set_id,
                of.kind,
                org_id,
                body.name,
                body.selectionStrategy,
                int(body.allowConcurrentUse),
                now,
                now,
            ),
        )
    return set_from_row(fetch_row(conn, "profile_sets", set_id))


def update_set(
    conn: Conn, of: Collection, org_id: str, set_id: object, body: ProfileSetUpdate
) -> ProfileSet:
    row = _owned(conn, of, org_id, set_id)
    changes = {COLUMNS[k]: getattr(body, k) for k in body.model_fields_set}
    if changes:
        sets = ", ".join(f"{column} = ?" for column in changes)
        with unique_name(of.label, body.name):
            conn.execute(
                f"UPDATE profile_sets SET {sets}, updated_at = ? WHERE id = ?",
                (*changes.values(), conn.now_iso(), row["id"]),
            )
    return set_from_row(fetch_row(conn, "profile_sets", row["id"]))


def delete_set(conn: Conn, of: Collection, org_id: str, set_id: object) -> None:
    row = _owned(conn, of, org_id, set_id)
    batch = live_batch_naming(conn, row["id"])
    if batch is not None:
        raise conflict(
            f"the {of.label} is named by items of execution batch '{batch}', which is not "
            "finished: cancel the batch or let it complete first"
        )
    conn.execute("DELETE FROM profile_sets WHERE id = ?", (row["id"],))


def list_members(
    conn: Conn, of: Collection, org_id: str, set_id: object, paging: PageParams
) -> Page[Member]:
    row = _owned(conn, of, org_id, set_id)
    return read_page(
        conn,
        "profiles",
        "id IN (SELECT profile_id FROM profile_set_members WHERE set_id = ?)",
        [row["id"]],
        PageRequest(paging),
        member_from_row,
    )


def add_members(
    conn: Conn, of: Collection, org_id: str, set_id: object, profile_ids: Sequence[object]
) -> None:
    """Adding a profile that is already a member changes nothing."""
    row = _owned(conn, of, org_id, set_id)
    ids = existing_profile_ids(conn, org_id, profile_ids)
    conn.executemany(
        "INSERT OR IGNORE INTO profile_set_members VALUES (?, ?)", [(row["id"], i) for i in ids]
    )


def remove_members(
    conn: Conn, of: Collection, org_id: str, set_id: object, profile_ids: Sequence[object]
) -> None:
    """Removing a profile that is not a member changes nothing."""
    row = _owned(conn, of, org_id, set_id)
    ids = existing_profile_ids(conn, org_id, profile_ids)
    conn.executemany(
        "DELETE FROM profile_set_members WHERE set_id = ? AND profile_id = ?",
        [(row["id"], i) for i in ids],
    )
