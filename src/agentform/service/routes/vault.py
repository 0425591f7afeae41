"""Vault templates (API.md §7), presets included in lists and read-only."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel

from ..auth import Caller, caller, database
from ..db import Database, new_id, now_iso
from ..errors import ServiceError, not_found
from ..models import Template, TemplateCreate, TemplateStep, TemplateUpdate
from ..paging import ListQuery, Page, list_page, search_query
from ..vault_rules import build_fields, check_steps
from .common import unique_name

router = APIRouter(prefix="/vault/templates", tags=["Vault"])
VISIBLE = "(organization_id = ? OR organization_id IS NULL)"


def template_from_row(row: sqlite3.Row) -> Template:
    return Template(
        id=row["id"],
        organizationId=row["organization_id"],
        kind=row["kind"],
        name=row["name"],
        description=row["description"],
        fields=json.loads(row["fields"]),
        steps=json.loads(row["steps"]),
        origin=row["origin"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def _visible(conn: sqlite3.Connection, template_id: uuid.UUID, who: Caller) -> sqlite3.Row:
    row = conn.execute(
        f"SELECT * FROM vault_templates WHERE id = ? AND {VISIBLE}",
        (str(template_id), who.organization_id),
    ).fetchone()
    if row is None:
        raise not_found("template")
    return row


def _writable(conn: sqlite3.Connection, template_id: uuid.UUID, who: Caller) -> sqlite3.Row:
    row = _visible(conn, template_id, who)
    if row["origin"] == "generated":
        raise ServiceError(403, "built-in templates cannot be changed or deleted")
    return row


def _dump(items: Sequence[BaseModel]) -> str:
    return json.dumps([i.model_dump(exclude_none=True) for i in items])


@router.get("", response_model=Page[Template], response_model_exclude_none=True)
def list_templates(
    query: ListQuery = Depends(search_query), db: Database = Depends(database)
) -> Page[Template]:
    with db.read() as conn:
        return list_page(
            db,
            conn,
            "vault_templates",
            VISIBLE,
            [query.who.organization_id],
            query,
            template_from_row,
        )


@router.post("", status_code=201, response_model=Template, response_model_exclude_none=True)
def create_template(
    body: TemplateCreate, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Template:
    who.check_organization(body.organizationId)
    fields = build_fields(body.fields)
    check_steps(body.steps, fields)
    now = now_iso()
    template_id = new_id()
    with db.write() as conn, unique_name("template", body.name):
        conn.execute(
            "INSERT INTO vault_templates VALUES (?, ?, ?, ?, ?, ?, ?, 'manual', ?, ?)",
            (
                template_id,
                who.organization_id,
                body.kind,
                body.name,
                body.description,
                _dump(fields),
                _dump(body.steps),
                now,
                now,
            ),
        )
        row = conn.execute("SELECT * FROM vault_templates WHERE id = ?", (template_id,)).fetchone()
    return template_from_row(row)


@router.get("/{templateId}", response_model=Template, response_model_exclude_none=True)
def get_template(
    templateId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Template:
    with db.read() as conn:
        return template_from_row(_visible(conn, templateId, who))


@router.patch("/{templateId}", response_model=Template, response_model_exclude_none=True)
def update_template(
    templateId: uuid.UUID,
    body: TemplateUpdate,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Template:
    with db.write() as conn, unique_name("template", body.name):
        current = template_from_row(_writable(conn, templateId, who))
        fields = build_fields(body.fields) if body.fields is not None else current.fields
        steps = body.steps if body.steps is not None else current.steps
        # Steps are checked against the fields the template will have after the change.
        check_steps([TemplateStep.model_validate(s.model_dump()) for s in steps], fields)
        sent = body.model_fields_set
        conn.execute(
            "UPDATE vault_templates SET kind = ?, name = ?, description = ?, fields = ?, "
            "steps = ?, updated_at = ? WHERE id = ?",
            (
                body.kind if "kind" in sent else current.kind,
                body.name if "name" in sent else current.name,
                body.description if "description" in sent else current.description,
                _dump(fields),
                _dump(list(steps)),
                now_iso(),
                current.id,
            ),
        )
        row = conn.execute("SELECT * FROM vault_templates WHERE id = ?", (current.id,)).fetchone()
    return template_from_row(row)


@router.delete("/{templateId}", status_code=204, response_class=Response)
def delete_template(
    templateId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Response:
    with db.write() as conn:
        row = _writable(conn, templateId, who)
        conn.execute("DELETE FROM vault_templates WHERE id = ?", (row["id"],))
    return Response(status_code=204)
