"""Who is calling (docs/service/contract.md#authentication-and-organizations): the key,
its organization and user."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class ApiKeyInfo(BaseModel):
    id: str
    name: str
    role: Literal["admin", "read"]


class OrganizationRef(BaseModel):
    id: str
    name: str


class Context(BaseModel):
    """The public service's three fields first
    (docs/service/contract.md#authentication-and-organizations), then ours."""

    userId: str
    email: str
    organizations: list[OrganizationRef]
    organizationId: str
    organizationName: str
    apiKey: ApiKeyInfo
