"""Wire models of profiles, their credentials and cookies
(docs/service/contract.md#agents-and-profiles)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from agentform.rules.profiles import Name
from agentform.rules.values import PlainText
from agentform.service.models.base import Id, Request, omittable

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Description = Annotated[str, StringConstraints(max_length=1000)]
InboxEmail = Annotated[
    str,
    StringConstraints(
        max_length=254, pattern=r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f]+$"
    ),
    PlainText,
]
NoVaultItems = Annotated[list[Any], Field(max_length=0)]  # this service has no vault items


class CredentialIn(Request):
    name: Name
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
    """The public SDK's profile (docs/service/contract.md#agents-and-profiles): its
    required fields, ours as defaults."""

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
    name: Name
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
    name: Name = omittable()
    description: Description | None = None
    tracingEnabled: bool = omittable()
    stickyIP: bool = omittable()
    inboxEmail: InboxEmail = omittable()
    vaultItems: NoVaultItems = omittable()
    credentials: list[CredentialIn] = omittable()  # a list sent replaces the whole list
    cookies: list[CookieIn] = omittable()
