"""Profiles (docs/service/contract.md#agents-and-profiles), also served under the
/agent-profiles alias."""

from __future__ import annotations

import uuid

from fastapi import Depends, Response

from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import ListQuery, Page, list_query
from agentform.service.models.profiles import Profile, ProfileCreate, ProfileUpdate
from agentform.service.store import profiles
from agentform.service.store.database import Database

router = api_router()


def _routes(prefix: str, tag: str, include_in_schema: bool = True) -> None:
    opts = {"tags": [tag], "include_in_schema": include_in_schema}

    @router.get(prefix, response_model=Page[Profile], **opts)  # type: ignore[arg-type]
    def list_profiles(query: ListQuery = Depends(list_query)) -> Page[Profile]:
        with query.db.read() as conn:
            return profiles.list_profiles(conn, query.who.organization_id, query.request)

    @router.post(prefix, status_code=201, response_model=Profile, **opts)  # type: ignore[arg-type]
    def create_profile(
        body: ProfileCreate, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Profile:
        who.check_organization(body.organizationId)
        with db.write() as conn:
            return profiles.create_profile(conn, who.organization_id, body)

    @router.get(prefix + "/{profileId}", response_model=Profile, **opts)  # type: ignore[arg-type]
    def get_profile(
        profileId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Profile:
        with db.read() as conn:
            return profiles.get_profile(conn, who.organization_id, profileId)

    @router.patch(prefix + "/{profileId}", response_model=Profile, **opts)  # type: ignore[arg-type]
    def update_profile(
        profileId: uuid.UUID,
        body: ProfileUpdate,
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Profile:
        with db.write() as conn:
            return profiles.update_profile(conn, who.organization_id, profileId, body)

    @router.delete(prefix + "/{profileId}", status_code=204, response_class=Response, **opts)  # type: ignore[arg-type]
    def delete_profile(
        profileId: uuid.UUID, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> Response:
        with db.write() as conn:
            profiles.delete_profile(conn, who.organization_id, profileId)
        return Response(status_code=204)


_routes("/profiles", "Profiles")
_routes("/agent-profiles", "Agent Profiles")
