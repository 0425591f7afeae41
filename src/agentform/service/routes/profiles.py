"""Profiles (API.md §5), also served under the /agent-profiles alias."""

from __future__ import annotations

import sqlite3
import uuid

from fastapi import APIRouter, Depends, Response

from ..auth import Caller, caller, database
from ..db import Database, new_id, now_iso
from ..models import Profile, ProfileCreate, ProfileUpdate
from ..paging import ListQuery, Page, list_page, list_query
from .common import fetch_owned, unique_name

router = APIRouter()


def profile_from_row(row: sqlite3.Row) -> Profile:
    return Profile(
        id=row["id"],
        name=row["name"],
        description=row["description"],
        organizationId=row["organization_id"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def _routes(prefix: str, tag: str, include_in_schema: bool = True) -> None:
    opts = {"tags": [tag], "include_in_schema": include_in_schema}

    @router.get(prefix, response_model=Page[Profile], **opts)  # type: ignore[arg-type]
    def list_profiles(
        query: ListQuery = Depends(list_query), db: Database = Depends(database)
    ) -> Page[Profile]:
        with db.read() as conn:
            return list_page(
                db,
                conn,
                "profiles",
                "organization_id = ?",
                [query.who.organization_id],
                query,
                profile_from_row,
            )

    @router.post(prefix, status_code=201, response_model=Profile, **opts)  # type: ignore[arg-type]
    def create_profile(
        body: ProfileCreate, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Profile:
        who.check_organization(body.organizationId)
        now = now_iso()
        with db.write() as conn, unique_name("profile", body.name):
            profile_id = new_id()
            conn.execute(
                "INSERT INTO profiles VALUES (?, ?, ?, ?, ?, ?)",
                (profile_id, who.organization_id, body.name, body.description, now, now),
            )
            row = conn.execute("SELECT * FROM profiles WHERE id = ?", (profile_id,)).fetchone()
        return profile_from_row(row)

    @router.get(prefix + "/{profileId}", response_model=Profile, **opts)  # type: ignore[arg-type]
    def get_profile(
        profileId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Profile:
        with db.read() as conn:
            row = fetch_owned(conn, "profiles", profileId, who.organization_id, "profile")
        return profile_from_row(row)

    @router.patch(prefix + "/{profileId}", response_model=Profile, **opts)  # type: ignore[arg-type]
    def update_profile(
        profileId: uuid.UUID,
        body: ProfileUpdate,
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Profile:
        changes = body.model_dump(include=body.model_fields_set)
        with db.write() as conn, unique_name("profile", body.name):
            row = fetch_owned(conn, "profiles", profileId, who.organization_id, "profile")
            if changes:
                sets = ", ".join(f"{k} = ?" for k in changes)
                conn.execute(
                    f"UPDATE profiles SET {sets}, updated_at = ? WHERE id = ?",
                    (*changes.values(), now_iso(), row["id"]),
                )
            row = conn.execute("SELECT * FROM profiles WHERE id = ?", (row["id"],)).fetchone()
        return profile_from_row(row)

    @router.delete(prefix + "/{profileId}", status_code=204, response_class=Response, **opts)  # type: ignore[arg-type]
    def delete_profile(
        profileId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Response:
        with db.write() as conn:
            row = fetch_owned(conn, "profiles", profileId, who.organization_id, "profile")
            # Memberships go with it (ON DELETE CASCADE on profile_set_members).
            conn.execute("DELETE FROM profiles WHERE id = ?", (row["id"],))
        return Response(status_code=204)


_routes("/profiles", "Profiles")
_routes("/agent-profiles", "Agent Profiles")
