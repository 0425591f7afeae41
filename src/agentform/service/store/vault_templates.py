"""Vault templates (docs/service/contract.md#vault-templates): rows, queries, row ->
model; presets are read-only.

The template rules (field keys, step checks) are the shared ones of
`agentform.rules.vault_templates`; `build_template` applies them on the way
in (a 400 naming every field at fault), and the rest of this module stores
templates that have passed them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from pydantic import BaseModel

from agentform.rules.vault_templates import StepLike, field_key, template_problems
from agentform.service.errors import ServiceError, bad_request, not_found
from agentform.service.models.pages import Page
from agentform.service.models.vault_templates import (
    Template,
    TemplateField,
    TemplateFieldIn,
    TemplateStep,
)
from agentform.service.store.common import fetch_row, stored_json, unique_name
from agentform.service.store.database import Conn, new_id
from agentform.service.store.pages import PageRequest, read_page

VISIBLE = "(organization_id = ? OR organization_id IS NULL)"


def build_template(
    fields: Sequence[TemplateFieldIn | TemplateField], steps: Sequence[StepLike]
) -> list[TemplateField]:
    """The fields with their derived keys; ServiceError 400 listing every problem."""
    problems = template_problems([f.label for f in fields], steps)
    if problems:
        raise bad_request(problems)
    return [
        TemplateField(
            type=f.type, label=f.label, required=f.required, hint=f.hint, key=field_key(f.label)
        )
        for f in fields
    ]


def template_from_row(row: sqlite3.Row) -> Template:
    return Template(
        id=row["id"],
        organizationId=row["organization_id"],
        kind=row["kind"],
        name=row["name"],
        description=row["description"],
        fields=stored_json(row["fields"]),
        steps=stored_json(row["steps"]),
        origin=row["origin"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def _dump(items: Sequence[BaseModel]) -> str:
    return json.dumps([i.model_dump(exclude_none=True) for i in items])


def _visible(conn: Conn, org_id: str, template_id: object) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM vault_templates WHERE id = ? AND {VISIBLE}", (str(template_id), org_id)
    ).fetchone()
    if row is None:
        raise not_found("template")
    return row


def list_templates(conn: Conn, org_id: str, request: PageRequest) -> Page[Template]:
    """The organization's templates and the presets."""
    return read_page(conn, "vault_templates", VISIBLE, [org_id], request, template_from_row)


def get_template(conn: Conn, org_id: str, template_id: object) -> Template:
    return template_from_row(_visible(conn, org_id, template_id))


def get_writable(conn: Conn, org_id: str, template_id: object) -> Template:
    """The organization's own template; a preset is 403."""
    row = _visible(conn, org_id, template_id)
    if row["origin"] == "generated":
        raise ServiceError(403, "built-in templates cannot be changed or deleted")
    return template_from_row(row)


def create_template(
    conn: Conn,
    org_id: str,
    kind: str,
    name: str,
    description: str | None,
    fields: Sequence[TemplateField],
    steps: Sequence[TemplateStep],
) -> Template:
    template_id, now = new_id(), conn.now_iso()
    with unique_name("template", name):
        conn.execute(
            "INSERT INTO vault_templates VALUES (?, ?, ?, ?, ?, ?, ?, 'manual', ?, ?)",
            (template_id, org_id, kind, name, description, _dump(fields), _dump(steps), now, now),
        )
    return template_from_row(fetch_row(conn, "vault_templates", template_id))


def replace_template(
    conn: Conn,
    template_id: str,
    kind: str,
    name: str,
    description: str | None,
    fields: Sequence[TemplateField],
    steps: Sequence[TemplateStep],
) -> Template:
    """Writes every value of a template found by `get_writable`."""
    with unique_name("template", name):
        conn.execute(
            "UPDATE vault_templates SET kind = ?, name = ?, description = ?, fields = ?, "
            "steps = ?, updated_at = ? WHERE id = ?",
            (kind, name, description, _dump(fields), _dump(steps), conn.now_iso(), template_id),
        )
    return template_from_row(fetch_row(conn, "vault_templates", template_id))


def delete_template(conn: Conn, org_id: str, template_id: object) -> None:
    current = get_writable(conn, org_id, template_id)
    conn.execute("DELETE FROM vault_templates WHERE id = ?", (current.id,))


def ensure_preset(
    conn: Conn,
    template_id: str,
    kind: str,
    name: str,
    description: str | None,
    fields: Sequence[TemplateField],
    steps: Sequence[TemplateStep],
    created_at: str,
) -> None:
    """Adds a built-in template (no organization, origin generated) unless present."""
    conn.execute(
        "INSERT OR IGNORE INTO vault_templates VALUES (?, NULL, ?, ?, ?, ?, ?, 'generated', ?, ?)",
        (template_id, kind, name, description, _dump(fields), _dump(steps), created_at, created_at),
    )
