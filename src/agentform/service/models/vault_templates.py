"""Wire models of vault templates (docs/service/contract.md#vault-templates): the types
and limits are the shared rules of `agentform.rules.vault_templates`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentform.rules import vault_templates as vault
from agentform.rules.vault_templates import FieldType, TemplateKind
from agentform.service.models.base import Id, Request, omittable


class TemplateFieldIn(Request):
    type: FieldType
    label: vault.Label
    required: bool
    hint: vault.Hint | None = None


class TemplateStep(Request):
    key: vault.StepKey
    title: vault.Title
    instructions: vault.Instructions | None = None
    fieldKeys: list[vault.FieldKey]


class TemplateField(BaseModel):
    type: FieldType
    label: str
    required: bool
    hint: str | None = None
    key: str


class TemplateCreate(Request):
    kind: TemplateKind
    name: vault.Name
    description: vault.Description | None = None
    fields: Annotated[list[TemplateFieldIn], Field(min_length=vault.MIN_FIELDS)]
    steps: Annotated[list[TemplateStep], Field(max_length=vault.MAX_STEPS)] = []
    organizationId: Id | None = None


class TemplateUpdate(Request):
    kind: TemplateKind = omittable()
    name: vault.Name = omittable()
    description: vault.Description | None = None
    fields: Annotated[list[TemplateFieldIn], Field(min_length=vault.MIN_FIELDS)] = omittable()
    steps: Annotated[list[TemplateStep], Field(max_length=vault.MAX_STEPS)] = omittable()


class Template(BaseModel):
    id: str
    organizationId: str | None = None
    kind: TemplateKind
    name: str
    description: str | None = None
    fields: list[TemplateField]
    steps: list[TemplateStep]
    origin: Literal["manual", "generated"]
    createdAt: str
    updatedAt: str
