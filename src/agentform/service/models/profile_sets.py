"""Wire models of profile pools and groups, and their members
(docs/service/contract.md#profile-pools-and-profile-groups).

The name rule, the member-call limit and the defaults are the shared rules of
`agentform.rules.profile_sets`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from agentform.rules.profile_sets import (
    DEFAULT_ALLOW_CONCURRENT_USE,
    DEFAULT_SELECTION_STRATEGY,
    MEMBERS_PER_CALL,
    Name,
    SelectionStrategy,
)
from agentform.service.models.base import Id, Request, omittable


class ProfileSet(BaseModel):
    id: str
    name: str
    organizationId: str
    selectionStrategy: SelectionStrategy
    allowConcurrentUse: bool
    createdAt: str
    updatedAt: str


class ProfileSetCreate(Request):
    name: Name
    organizationId: Id | None = None
    selectionStrategy: SelectionStrategy = DEFAULT_SELECTION_STRATEGY
    allowConcurrentUse: bool = DEFAULT_ALLOW_CONCURRENT_USE


class ProfileSetUpdate(Request):
    name: Name = omittable()
    selectionStrategy: SelectionStrategy = omittable()
    allowConcurrentUse: bool = omittable()


class Member(BaseModel):
    id: str
    name: str
    organizationId: str
    createdAt: str
    updatedAt: str


class MembersRequest(Request):
    profileIds: Annotated[list[Id], Field(min_length=1, max_length=MEMBERS_PER_CALL)]
