"""Profiles (docs/service/contract.md#agents-and-profiles): rows, queries and the row ->
model mapping."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from agentform.service.errors import bad_request
from agentform.service.models.pages import Page
from agentform.service.models.profiles import (
    Cookie,
    CookieIn,
    Credential,
    CredentialIn,
    Profile,
    ProfileCreate,
    ProfileUpdate,
)
from agentform.service.store.common import fetch_owned, fetch_row, stored_json, unique_name
from agentform.service.store.database import Conn, new_id
from agentform.service.store.pages import PageRequest, read_page

SECRET_MASK = "********"  # a credential's value is never answered
COLUMNS = (
    "id, organization_id, name, description, created_at, updated_at, "
    "tracing_enabled, sticky_ip, inbox_email, credentials, cookies"
)


def profile_from_row(row: sqlite3.Row) -> Profile:
    return Profile(
        id=row["id"],
        name=row["name"],
        description=row["description"] or "",
        organizationId=row["organization_id"],
        tracingEnabled=bool(row["tracing_enabled"]),
        stickyIP=bool(row["sticky_ip"]),
        inboxEmail=row["inbox_email"] or f"{row['id']}@inbox.invalid",
        vaultItems=[],
        credentials=[
            Credential(**{**c, "data": SECRET_MASK}) for c in stored_json(row["credentials"])
        ],
        cookies=[Cookie(**c) for c in stored_json(row["cookies"])],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def _stored(items: Sequence[CredentialIn | CookieIn], now: str) -> str:
    """Credentials or cookies as stored: each with an id and a time; credential names are
    upper-cased (as the public service does)."""
    out = []
    for item in items:
        fields = item.model_dump()
        if isinstance(item, CredentialIn):
            fields["name"] = item.name.upper()
        out.append({"id": new_id(), **fields, "createdAt": now})
    return json.dumps(out)


def list_profiles(conn: Conn, org_id: str, request: PageRequest) -> Page[Profile]:
    return read_page(conn, "profiles", "organization_id = ?", [org_id], request, profile_from_row)


def get_profile(conn: Conn, org_id: str, profile_id: object) -> Profile:
    return profile_from_row(fetch_owned(conn, "profiles", profile_id, org_id, "profile"))


def create_profile(conn: Conn, org_id: str, body: ProfileCreate) -> Profile:
    profile_id, now = new_id(), conn.now_iso()
    with unique_name("profile", body.name):
        conn.execute(
            f"INSERT INTO profiles ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                profile_id,
                org_id,
                body.name,
                body.description or "",
                now,
                now,
                body.tracingEnabled,
                body.stickyIP,
                body.inboxEmail,
                _stored(body.credentials, now),
                _stored(body.cookies, now),
            ),
        )
    return profile_from_row(fetch_row(conn, "profiles", profile_id))


UPDATED: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "name": ("name", lambda v, now: v),
    "description": ("description", lambda v, now: v or ""),
    "tracingEnabled": ("tracing_enabled", lambda v, now: v),
    "stickyIP": ("sticky_ip", lambda v, now: v),
    "inboxEmail": ("inbox_email", lambda v, now: v),
    "credentials": ("credentials", _stored),
    "cookies": ("cookies", _stored),
}  # field -> (column, stored value); vaultItems is always empty here


def update_profile(conn: Conn, org_id: str, profile_id: object, body: ProfileUpdate) -> Profile:
    row = fetch_owned(conn, "profiles", profile_id, org_id, "profile")
    now = conn.now_iso()
    changes = {
        UPDATED[f][0]: UPDATED[f][1](getattr(body, f), now)
        for f in body.model_fields_set
        if f in UPDATED
    }
    if changes:
        sets = ", ".join(f"{column} = ?" for column in changes)  # columns of UPDATED only
        with unique_name("profile", body.name):
            conn.execute(
                f"UPDATE profiles SET {sets}, updated_at = ? WHERE id = ?",
                (*changes.values(), now, row["id"]),
            )
    return profile_from_row(fetch_row(conn, "profiles", row["id"]))


def delete_profile(conn: Conn, org_id: str, profile_id: object) -> None:
    row = fetch_owned(conn, "profiles", profile_id, org_id, "profile")
    # Memberships go with it (ON DELETE CASCADE on profile_set_members).
    conn.execute("DELETE FROM profiles WHERE id = ?", (row["id"],))


def ensure_profile(
    conn: Conn, profile_id: str, org_id: str, name: str, description: str | None, created_at: str
) -> None:
    """Adds the profile unless the organization has one of that name."""
    conn.execute(
        "INSERT OR IGNORE INTO profiles (id, organization_id, name, description, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (profile_id, org_id, name, description or "", created_at, created_at),
    )


def existing_profile_ids(conn: Conn, org_id: str, ids: Sequence[object]) -> list[str]:
    """The distinct ids given, all profiles of the organization, else 400 naming the others."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    marks = ",".join("?" * len(wanted))
    found = {
        r[0]
        for r in conn.execute(
            f"SELECT id FROM profiles WHERE organization_id = ? AND id IN ({marks})",
            (org_id, *wanted),
        )
    }
    unknown = [i for i in wanted if i not in found]
    if unknown:
        detail = "not profiles of this organization: " + ", ".join(unknown)
        raise bad_request([("profileIds", detail)])
    return wanted
