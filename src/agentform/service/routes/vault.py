"""Vault templates (docs/service/contract.md#vault-templates), presets included in lists
and read-only."""

from __future__ import annotations

import uuid

from fastapi import Depends, Response

from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import ListQuery, Page, search_query
from agentform.service.models.vault_templates import (
    Template,
    TemplateCreate,
    TemplateStep,
    TemplateUpdate,
)
from agentform.service.store import vault_templates
from agentform.service.store.database import Database
from agentform.service.store.vault_templates import build_template

router = api_router(prefix="/vault/templates", tags=["Vault"])


@router.get("", response_model=Page[Template], response_model_exclude_none=True)
def list_templates(query: ListQuery = Depends(search_query)) -> Page[Template]:
    with query.db.read() as conn:
        return vault_templates.list_templates(conn, query.who.organization_id, query.request)


@router.post("", status_code=201, response_model=Template, response_model_exclude_none=True)
def create_template(
    body: TemplateCreate, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Template:
    who.check_organization(body.organizationId)
    fields = build_template(body.fields, body.steps)
    with db.write() as conn:
        return vault_templates.create_template(
            conn, who.organization_id, body.kind, body.name, body.description, fields, body.steps
        )


@router.get("/{templateId}", response_model=Template, response_model_exclude_none=True)
def get_template(
    templateId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Template:
    with db.read() as conn:
        return vault_templates.get_template(conn, who.organization_id, templateId)


@router.patch("/{templateId}", response_model=Template, response_model_exclude_none=True)
def update_template(
    templateId: uuid.UUID,
    body: TemplateUpdate,
    who: Caller = Depends(caller),
    db: Database = Depends(database),
) -> Template:
    with db.write() as conn:
        current = vault_templates.get_writable(conn, who.organization_id, templateId)
        steps = body.steps if body.steps is not None else current.steps
        # Steps are checked against the fields the template will have after the change.
        steps = [TemplateStep.model_validate(s.model_dump()) for s in steps]
        fields = build_template(body.fields if body.fields is not None else current.fields, steps)
        sent = body.model_fields_set
        return vault_templates.replace_template(
            conn,
            current.id,
            body.kind if "kind" in sent else current.kind,
            body.name if "name" in sent else current.name,
            body.description if "description" in sent else current.description,
            fields,
            steps,
        )


@router.delete("/{templateId}", status_code=204, response_class=Response)
def delete_template(
    templateId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
) -> Response:
    with db.write() as conn:
        vault_templates.delete_template(conn, who.organization_id, templateId)
    return Response(status_code=204)
