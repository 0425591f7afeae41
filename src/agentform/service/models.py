"""Wire models of the service: request bodies (strict, unknown fields refused) and answers."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agentform.rules import vault_templates as vault
from agentform.rules.profile_sets import SelectionStrategy
from agentform.rules.vault_templates import FieldType, TemplateKind

Name255 = Annotated[str, StringConstraints(min_length=1, max_length=255)]
# Request ids: parsed from JSON strings (strict mode would refuse a str for a UUID).
Id = Annotated[uuid.UUID, Field(strict=False)]


def omittable() -> Any:
    """A PATCH field that may be left out but not sent as null (null is a 400).

    Pydantic does not validate defaults, so leaving the field out gives None
    while an explicit null fails the (non-nullable) type; the OpenAPI document
    then shows the field as optional and not nullable, which is the truth.
    """
    return Field(default=None)


class Request(BaseModel):
    """Request bodies: strict types, and an unknown field is a 400 naming it."""

    model_config = ConfigDict(extra="forbid", strict=True)


# -- agents and profiles (API.md §5) ------------------------------------------


class Agent(BaseModel):
    id: str
    name: str
    organizationId: str
    userId: str  # its creator: the organization's service user
    publishedVersion: int
    versions: list[int]
    createdAt: str
    updatedAt: str


Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Description = Annotated[str, StringConstraints(max_length=1000)]
InboxEmail = Annotated[str, StringConstraints(max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")]
NoVaultItems = Annotated[list[Any], Field(max_length=0)]  # this service has no vault items


class CredentialIn(Request):
    name: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    data: Text  # a secret: stored, never answered


class Credential(BaseModel):
    id: str
    name: str
    data: str  # always the mask
    createdAt: str


class CookieIn(Request):
    name: Text
    key: Text
    value: Text
    domain: Text
    expiry: str | None = None
    secure: bool = False
    sameSite: Literal["Strict", "Lax", "None"] = "Lax"
    httpOnly: bool = False


class Cookie(CookieIn):
    id: str
    createdAt: str


class Profile(BaseModel):
    """The public SDK's profile (API.md §5): its required fields, ours as defaults."""

    id: str
    name: str
    description: str
    organizationId: str
    tracingEnabled: bool
    stickyIP: bool
    inboxEmail: str
    vaultItems: list[Any]
    credentials: list[Credential]
    cookies: list[Cookie]
    createdAt: str
    updatedAt: str


class ProfileCreate(Request):
    name: Name255
    description: Description | None = None
    organizationId: Id | None = None
    tracingEnabled: bool = False
    stickyIP: bool = False
    inboxEmail: InboxEmail | None = None
    vaultItems: NoVaultItems = []
    credentials: list[CredentialIn] = []
    cookies: list[CookieIn] = []


class ProfileUpdate(Request):
    # Optional but not nullable: `null` is a 400, and the document says so.
    name: Name255 = omittable()
    description: Description | None = None
    tracingEnabled: bool = omittable()
    stickyIP: bool = omittable()
    inboxEmail: InboxEmail = omittable()
    vaultItems: NoVaultItems = omittable()
    credentials: list[CredentialIn] = omittable()  # a list sent replaces the whole list
    cookies: list[CookieIn] = omittable()


# -- pools and groups (API.md §6) ---------------------------------------------


class ProfileSet(BaseModel):
    id: str
    name: str
    organizationId: str
    selectionStrategy: SelectionStrategy
    allowConcurrentUse: bool
    createdAt: str
    updatedAt: str


class ProfileSetCreate(Request):
    name: Name255
    organizationId: Id | None = None
    selectionStrategy: SelectionStrategy = "least_recently_used"
    allowConcurrentUse: bool = False


class ProfileSetUpdate(Request):
    name: Name255 = omittable()
    selectionStrategy: SelectionStrategy = omittable()
    allowConcurrentUse: bool = omittable()


class Member(BaseModel):
    id: str
    name: str
    organizationId: str
    createdAt: str
    updatedAt: str


class MembersRequest(Request):
    profileIds: Annotated[list[Id], Field(min_length=1, max_length=100)]


# -- vault templates (API.md §7) ----------------------------------------------


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
    fields: Annotated[list[TemplateFieldIn], Field(min_length=1)]
    steps: Annotated[list[TemplateStep], Field(max_length=vault.MAX_STEPS)] = []
    organizationId: Id | None = None


class TemplateUpdate(Request):
    kind: TemplateKind = omittable()
    name: vault.Name = omittable()
    description: vault.Description | None = None
    fields: Annotated[list[TemplateFieldIn], Field(min_length=1)] = omittable()
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


# -- context (API.md §2) ------------------------------------------------------


class ApiKeyInfo(BaseModel):
    id: str
    name: str
    role: Literal["admin", "read"]


class OrganizationRef(BaseModel):
    id: str
    name: str


class Context(BaseModel):
    """The public service's three fields first (API.md §2), then ours."""

    userId: str
    email: str
    organizations: list[OrganizationRef]
    organizationId: str
    organizationName: str
    apiKey: ApiKeyInfo
