"""Agent profile pools and profile groups (API.md §6): two collections, one shape.

`collection_router` builds the same operations for either collection; a pool
id used under /profile-groups is simply not found there.
"""

from __future__ import annotations

import sqlite3
import uuid

from fastapi import APIRouter, Depends, Path, Response

from ..auth import Caller, caller, database
from ..db import Database, new_id, now_iso
from ..errors import ServiceError
from ..models import Member, MembersRequest, ProfileSet, ProfileSetCreate, ProfileSetUpdate
from ..paging import ListQuery, Page, PageParams, list_page, list_query, page_params
from .common import fetch_owned, unique_name

COLUMNS = {
    "name": "name",
    "selectionStrategy": "selection_strategy",
    "allowConcurrentUse": "allow_concurrent_use",
}


def set_from_row(row: sqlite3.Row) -> ProfileSet:
    return ProfileSet(
        id=row["id"],
        name=row["name"],
        organizationId=row["organization_id"],
        selectionStrategy=row["selection_strategy"],
        allowConcurrentUse=bool(row["allow_concurrent_use"]),
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def member_from_row(row: sqlite3.Row) -> Member:
    return Member(
        id=row["id"],
        name=row["name"],
        organizationId=row["organization_id"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def _profile_ids(conn: sqlite3.Connection, body: MembersRequest, org_id: str) -> list[str]:
    """The distinct ids of the body, all of them profiles of the organization, else 400."""
    ids = list(dict.fromkeys(str(i) for i in body.profileIds))
    marks = ",".join("?" * len(ids))
    found = {
        r[0]
        for r in conn.execute(
            f"SELECT id FROM profiles WHERE organization_id = ? AND id IN ({marks})",
            (org_id, *ids),
        )
    }
    unknown = [i for i in ids if i not in found]
    if unknown:
        detail = "not profiles of this organization: " + ", ".join(unknown)
        raise ServiceError(400, f"profileIds: {detail}", [("profileIds", detail)])
    return ids


def collection_router(collection: str, prefix: str, param: str, label: str, tag: str) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=[tag])
    item = "/{" + param + "}"

    def owned(conn: sqlite3.Connection, set_id: uuid.UUID, who: Caller) -> sqlite3.Row:
        return fetch_owned(
            conn,
            "profile_sets",
            set_id,
            who.organization_id,
            label,
            "AND collection = ?",
            (collection,),
        )

    @router.get("", response_model=Page[ProfileSet])
    def list_sets(
        query: ListQuery = Depends(list_query), db: Database = Depends(database)
    ) -> Page[ProfileSet]:
        with db.read() as conn:
            return list_page(
                db,
                conn,
                "profile_sets",
                "collection = ? AND organization_id = ?",
                [collection, query.who.organization_id],
                query,
                set_from_row,
            )

    @router.post("", status_code=201, response_model=ProfileSet)
    def create_set(
        body: ProfileSetCreate, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> ProfileSet:
        who.check_organization(body.organizationId)
        now = now_iso()
        set_id = new_id()
        with db.write() as conn, unique_name(label, body.name):
            conn.execute(
                "INSERT INTO profile_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    set_id,
                    collection,
                    who.organization_id,
                    body.name,
                    body.selectionStrategy,
                    int(body.allowConcurrentUse),
                    now,
                    now,
                ),
            )
            row = conn.execute("SELECT * FROM profile_sets WHERE id = ?", (set_id,)).fetchone()
        return set_from_row(row)

    @router.get(item, response_model=ProfileSet)
    def get_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        with db.read() as conn:
            return set_from_row(owned(conn, set_id, who))

    @router.patch(item, response_model=ProfileSet)
    def update_set(
        body: ProfileSetUpdate,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        changes = {COLUMNS[k]: getattr(body, k) for k in body.model_fields_set}
        with db.write() as conn, unique_name(label, body.name):
            row = owned(conn, set_id, who)
            if changes:
                sets = ", ".join(f"{column} = ?" for column in changes)
                conn.execute(
                    f"UPDATE profile_sets SET {sets}, updated_at = ? WHERE id = ?",
                    (*changes.values(), now_iso(), row["id"]),
                )
            row = conn.execute("SELECT * FROM profile_sets WHERE id = ?", (row["id"],)).fetchone()
        return set_from_row(row)

    @router.delete(item, status_code=204, response_class=Response)
    def delete_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        with db.write() as conn:
            row = owned(conn, set_id, who)
            conn.execute("DELETE FROM profile_sets WHERE id = ?", (row["id"],))
        return Response(status_code=204)

    @router.get(item + "/members", response_model=Page[Member])
    def list_members(
        set_id: uuid.UUID = Path(alias=param),
        paging: PageParams = Depends(page_params),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Page[Member]:
        with db.read() as conn:
            row = owned(conn, set_id, who)
            return list_page(
                db,
                conn,
                "profiles",
                "id IN (SELECT profile_id FROM profile_set_members WHERE set_id = ?)",
                [row["id"]],
                paging,
                member_from_row,
            )

    def change_members(
        statement: str, set_id: uuid.UUID, body: MembersRequest, who: Caller, db: Database
    ) -> Response:
        """Adds or removes; idempotent either way (INSERT OR IGNORE / DELETE of nothing)."""
        with db.write() as conn:
            row = owned(conn, set_id, who)
            ids = _profile_ids(conn, body, who.organization_id)
            conn.executemany(statement, [(row["id"], i) for i in ids])
        return Response(status_code=204)

    @router.post(item + "/members", status_code=204, response_class=Response)
    def add_members(
        body: MembersRequest,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        return change_members(
            "INSERT OR IGNORE INTO profile_set_members VALUES (?, ?)", set_id, body, who, db
        )

    @router.delete(item + "/members", status_code=204, response_class=Response)
    def remove_members(
        body: MembersRequest,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        return change_members(
            "DELETE FROM profile_set_members WHERE set_id = ? AND profile_id = ?",
            set_id,
            body,
            who,
            db,
        )

    return router


pools_router = collection_router(
    "pool", "/agent-profile-pools", "poolId", "pool", "Agent Profile Pools"
)
groups_router = collection_router(
    "group", "/profile-groups", "groupId", "profile group", "Profile Groups"
)
