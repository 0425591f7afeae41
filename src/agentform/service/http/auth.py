"""Who is calling: API key lookup, roles and organization checks
(docs/service/contract.md#authentication-and-organizations)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from agentform.service.errors import ServiceError
from agentform.service.store.database import Database
from agentform.service.store.organizations import find_key, hash_key

__all__ = ["KEY_HEADERS", "Caller", "authenticate", "caller", "database", "hash_key"]

# the two headers a key may come in
# (docs/service/contract.md#authentication-and-organizations); both given, they must
# agree
KEY_HEADERS = ("X-Api-Key", "X-Service-Agents-Api-Key")
_api_key = APIKeyHeader(name=KEY_HEADERS[0], auto_error=False, scheme_name="ApiKey")
_service_key = APIKeyHeader(
    name=KEY_HEADERS[1], auto_error=False, scheme_name="ServiceAgentsApiKey"
)


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


async def caller(
    request: Request,
    api_key: str | None = Depends(_api_key),
    service_key: str | None = Depends(_service_key),
) -> Caller:
    """The caller the gate authenticated (`gate.ServiceRoute`), before the body was read.

    The key parameters are here so that the OpenAPI document shows both schemes.
    """
    found: Caller | None = getattr(request.state, "caller", None)
    return found if found is not None else authenticate(request)
