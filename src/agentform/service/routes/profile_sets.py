"""Agent profile pools and profile groups
(docs/service/contract.md#profile-pools-and-profile-groups): two collections, one shape.

`add_collection` adds the same operations for either collection, to one router.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

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


def add_collection(router: APIRouter, of: Collection, path: str, param: str, tag: str) -> None:
    """The operations of one collection at `path`: the sets themselves, then their members."""
    item = path + "/{" + param + "}"
    _add_set_routes(router, of, _At(path, item, param, [tag]))
    _add_member_routes(router, of, _At(path, item, param, [tag]))


@dataclass(frozen=True)
class _At:
    """Where a collection's operations are: its path, an item's, the item's parameter."""

    path: str
    item: str
    param: str
    tags: list[str | Enum]


def _add_set_routes(router: APIRouter, of: Collection, at: _At) -> None:
    item, param = at.item, at.param

    @router.get(at.path, response_model=Page[ProfileSet], tags=at.tags)
    def list_sets(query: ListQuery = Depends(list_query)) -> Page[ProfileSet]:
        with query.db.read() as conn:
            return profile_sets.list_sets(conn, of, query.who.organization_id, query.request)

    @router.post(at.path, status_code=201, response_model=ProfileSet, tags=at.tags)
    def create_set(
        body: ProfileSetCreate, who: Caller = Depends(caller), db: Database = Depends(database)
    ) -> ProfileSet:
        who.check_organization(body.organizationId)
        with db.write() as conn:
            return profile_sets.create_set(conn, of, who.organization_id, body)

    @router.get(item, response_model=ProfileSet, tags=at.tags)
    def get_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        with db.read() as conn:
            return profile_sets.get_set(conn, of, who.organization_id, set_id)

    @router.patch(item, response_model=ProfileSet, tags=at.tags)
    def update_set(
        body: ProfileSetUpdate,
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> ProfileSet:
        with db.write() as conn:
            return profile_sets.update_set(conn, of, who.organization_id, set_id, body)

    @router.delete(item, status_code=204, response_class=Response, tags=at.tags)
    def delete_set(
        set_id: uuid.UUID = Path(alias=param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        with db.write() as conn:
            profile_sets.delete_set(conn, of, who.organization_id, set_id)
        return Response(status_code=204)


MemberChange = Callable[[Conn, Collection, str, object, Sequence[object]], None]


def _add_member_routes(router: APIRouter, of: Collection, at: _At) -> None:
    item, param = at.item, at.param

    @router.get(item + "/members", response_model=Page[Member], tags=at.tags)
    def list_members(
        set_id: uuid.UUID = Path(alias=param),
        paging: PageParams = Depends(page_params),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Page[Member]:
        with db.read() as conn:
            return profile_sets.list_members(conn, of, who.organization_id, set_id, paging)

    _add_member_change(router, of, at, "POST", "add_members", profile_sets.add_members)
    _add_member_change(router, of, at, "DELETE", "remove_members", profile_sets.remove_members)


def _add_member_change(
    router: APIRouter,
    of: Collection,
    at: _At,
    method: str,
    name: str,
    change: MemberChange,
) -> None:
    """Adding and removing members: one body, one answer (204), only the change differs.
    `name` is the operation's (its operationId and summary in the document)."""

    def change_members(
        body: MembersRequest,
        set_id: uuid.UUID = Path(alias=at.param),
        who: Caller = Depends(caller),
        db: Database = Depends(database),
    ) -> Response:
        with db.write() as conn:
            change(conn, of, who.organization_id, set_id, body.profileIds)
        return Response(status_code=204)

    router.add_api_route(
        at.item + "/members",
        change_members,
        methods=[method],
        tags=at.tags,
        status_code=204,
        response_class=Response,
        name=name,
    )


router = api_router()
add_collection(router, POOLS, "/agent-profile-pools", "poolId", "Agent Profile Pools")
add_collection(router, GROUPS, "/profile-groups", "groupId", "Profile Groups")
