"""Agent profile pools and profile groups
(docs/service/contract.md#profile-pools-and-profile-groups): two collections, one shape.

`collection_router` builds the same operations for either collection.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from fastapi import APIRouter, Depends, Path, Response

from agentform.service.http.auth import Caller, caller, database
from agentform.service.http.gate import api_router
from agentform.service.http.paging import ListQuery, Page, PageParams, list_query, page_params
from agentform.service.models.profile_sets import (
    Member,
    MembersRequest,
    ProfileSet,
    ProfileSetCreate,
    ProfileSetUpdate,
)
from agentform.service.store import profile_sets
from agentform.service.store.database import Conn, Database
from agentform.service.store.profile_sets import GROUPS, POOLS, Collection


def collection_router(of: Collection, prefix: str, param: str, tag: str) -> APIRouter:
    """The operations of one collection: the sets themselves, then their members."""
    router = api_router(prefix=prefix, tags=[tag])
    item = "/{" + param + "}"
    _add_set_routes(router, of, item, param)
    _add_member_routes(router, of, item, param)
    return router


def _add_set_routes(router: APIRouter, of: Collection, item: str, param: str) -> None:
    @router.get("", response_model=Page[ProfileSet])
    def list_sets(
        query: ListQuery = Depends(list_query), db: Database = Depends(database)
    ) -> Page[ProfileSet]:
        with db.read() as conn:
            return profile_sets.list_sets(conn, of, query.who.organization_id, query.request)

    @router.post("", status_code=201, response_model=ProfileSet)
    def create_set(
        body: ProfileSetCreate, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> ProfileSet:
        who.check_organization(body.organizationId)
        with db.write() as conn:
            return profile_sets.create_set(conn, of, who.organization_id, body)

    @router.get(item, response_model=ProfileSet)
    def get_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        with db.read() as conn:
            return profile_sets.get_set(conn, of, who.organization_id, set_id)

    @router.patch(item, response_model=ProfileSet)
    def update_set(
        body: ProfileSetUpdate,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        with db.write() as conn:
            return profile_sets.update_set(conn, of, who.organization_id, set_id, body)

    @router.delete(item, status_code=204, response_class=Response)
    def delete_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        with db.write() as conn:
            profile_sets.delete_set(conn, of, who.organization_id, set_id)
        return Response(status_code=204)


MemberChange = Callable[[Conn, Collection, str, object, Sequence[object]], None]


def _add_member_routes(router: APIRouter, of: Collection, item: str, param: str) -> None:
    @router.get(item + "/members", response_model=Page[Member])
    def list_members(
        set_id: uuid.UUID = Path(alias=param),
        paging: PageParams = Depends(page_params),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Page[Member]:
        with db.read() as conn:
            return profile_sets.list_members(conn, of, who.organization_id, set_id, paging)

    _add_member_change(router, of, item, param, "POST", "add_members", profile_sets.add_members)
    _add_member_change(
        router, of, item, param, "DELETE", "remove_members", profile_sets.remove_members
    )


def _add_member_change(
    router: APIRouter,
    of: Collection,
    item: str,
    param: str,
    method: str,
    name: str,
    change: MemberChange,
) -> None:
    """Adding and removing members: one body, one answer (204), only the change differs.
    `name` is the operation's (its operationId and summary in the document)."""

    def change_members(
        body: MembersRequest,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        with db.write() as conn:
            change(conn, of, who.organization_id, set_id, body.profileIds)
        return Response(status_code=204)

    router.add_api_route(
        item + "/members",
        change_members,
        methods=[method],
        status_code=204,
        response_class=Response,
        name=name,
    )


pools_router = collection_router(POOLS, "/agent-profile-pools", "poolId", "Agent Profile Pools")
groups_router = collection_router(GROUPS, "/profile-groups", "groupId", "Profile Groups")
router = api_router()
router.include_router(pools_router)
router.include_router(groups_router)
