"""The agent as the service answers it (docs/service/contract.md#agents-and-profiles)."""

from __future__ import annotations

from pydantic import BaseModel


class Agent(BaseModel):
    id: str
    name: str
    organizationId: str
    userId: str  # its creator: the organization's service user
    publishedVersion: int
    versions: list[int]
    createdAt: str
    updatedAt: str
