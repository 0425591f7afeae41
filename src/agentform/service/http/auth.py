"""Who is calling: API key lookup, roles and organization checks
(docs/service/contract.md#authentication-and-organizations)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from fastapi import Request

from agentform.service.errors import ServiceError
from agentform.service.store.database import Database
from agentform.service.store.organizations import find_key, hash_key

__all__ = [
    "KEY_HEADERS",
    "KEY_SCHEMES",
    "Caller",
    "authenticate",
    "caller",
    "current_caller",
    "database",
    "hash_key",
]

# the two headers a key may come in
# (docs/service/contract.md#authentication-and-organizations); both given, they must
# agree
KEY_HEADERS = ("X-Api-Key", "X-Service-Agents-Api-Key")
KEY_SCHEMES = {"ApiKey": KEY_HEADERS[0], "ServiceAgentsApiKey": KEY_HEADERS[1]}
"""The OpenAPI security scheme of each key header, by the scheme's name."""


@dataclass(frozen=True)
class Caller:
    organization_id: str
    organization_name: str
    key_id: str
    key_name: str
    role: str

    def check_organization(self, organization_id: uuid.UUID | None) -> None:
        """An organizationId (query or body) naming another organization is 403."""
        if organization_id is not None and str(organization_id) != self.organization_id:
            raise ServiceError(403, "organizationId: not your organization")


async def database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def authenticate(request: Request) -> Caller:
    """The caller of a request, from its key headers alone (no I/O), or 401/403."""
    api_key, service_key = (request.headers.get(name) for name in KEY_HEADERS)
    if api_key is not None and service_key is not None and api_key != service_key:
        raise ServiceError(401, f"{KEY_HEADERS[0]} and {KEY_HEADERS[1]} disagree")
    key = api_key if api_key is not None else service_key
    if not key:
        raise ServiceError(401, "missing API key")
    found = find_key(request.app.state.db, key)  # in memory: no SQLite call
    if found is None:
        raise ServiceError(401, "invalid API key")
    if found.role != "admin" and request.method not in ("GET", "HEAD"):
        raise ServiceError(403, "this API key may only read")
    return Caller(found.organization_id, found.organization_name, found.id, found.name, found.role)


def current_caller(request: Request) -> Caller:
    """The caller the gate authenticated (`gate.ServiceRoute`), before the body was
    read; authenticated here for a request that did not pass the gate."""
    found: Caller | None = getattr(request.state, "caller", None)
    return found if found is not None else authenticate(request)


async def caller(request: Request) -> Caller:
    """`current_caller`, as a dependency.

    The OpenAPI document's schemes are `KEY_SCHEMES`, written in by `http.openapi`:
    as dependencies (FastAPI's `APIKeyHeader`) they were two more to resolve on
    every request, for a header the gate had read already.
    """
    return current_caller(request)
