"""Agent profile pools and profile groups
(docs/service/contract.md#profile-pools-and-profile-groups): the same table for both."""

from __future__ import annotations

import pytest

from tests.service.conftest import ACME, OTHER, Api, assert_error

COLLECTIONS = ["/agent-profile-pools", "/profile-groups"]


@pytest.fixture(params=COLLECTIONS)
def coll(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_create_defaults_and_get(api: Api, coll: str) -> None:
    r = api.post(coll, json={"name": "eu"})
    assert r.status_code == 201
    body = r.json()
    assert body["name"] == "eu"
    assert body["organizationId"] == ACME
    assert body["selectionStrategy"] == "least_recently_used"
    assert body["allowConcurrentUse"] is False
    assert body["createdAt"].endswith("Z") and body["createdAt"] == body["updatedAt"]
    got = api.get(f"{coll}/{body['id']}")
    assert got.status_code == 200 and got.json() == body


def test_create_with_all_fields(api: Api, coll: str) -> None:
    r = api.post(
        coll,
        json={
            "name": "x",
            "organizationId": ACME,
            "selectionStrategy": "most_recently_used",
            "allowConcurrentUse": True,
        },
    )
    assert r.status_code == 201
    assert r.json()["selectionStrategy"] == "most_recently_used"
    assert r.json()["allowConcurrentUse"] is True


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 256}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x", "selectionStrategy": "random"}, "selectionStrategy"),
        ({"name": "x", "allowConcurrentUse": "yes"}, "allowConcurrentUse"),
        ({"name": "x", "colour": "red"}, "colour"),
        ({"name": "x", "organizationId": "nope"}, "organizationId"),
    ],
)
def test_create_rejects_bad_bodies(api: Api, coll: str, body: dict, field: str) -> None:  # type: ignore[type-arg]
    err = assert_error(api.post(coll, json=body), 400, field)
    assert any(e["parameter"] == field for e in err["errors"])
    assert api.get(coll).json()["total"] == 0


def test_not_json_is_400(api: Api, coll: str) -> None:
    assert_error(
        api.post(coll, content=b"{not json", headers={"Content-Type": "application/json"}), 400
    )


def test_name_taken_on_create_and_rename(api: Api, coll: str) -> None:
    api.post(coll, json={"name": "a"})
    b = api.post(coll, json={"name": "b"}).json()
    assert_error(api.post(coll, json={"name": "a"}), 409, "a")
    assert_error(api.patch(f"{coll}/{b['id']}", json={"name": "a"}), 409)
    assert api.get(f"{coll}/{b['id']}").json()["name"] == "b"


def test_same_name_in_the_other_collection_and_other_org(api: Api, coll: str) -> None:
    other_coll = next(c for c in COLLECTIONS if c != coll)
    assert api.post(coll, json={"name": "shared"}).status_code == 201
    assert api.post(other_coll, json={"name": "shared"}).status_code == 201
    assert api.as_key("other-admin-key-0001").post(coll, json={"name": "shared"}).status_code == 201


def test_patch_changes_only_sent_fields(api: Api, coll: str) -> None:
    created = api.post(coll, json={"name": "a", "allowConcurrentUse": True}).json()
    r = api.patch(f"{coll}/{created['id']}", json={"selectionStrategy": "most_recently_used"})
    assert r.status_code == 200
    body = r.json()
    assert body["selectionStrategy"] == "most_recently_used"
    assert body["allowConcurrentUse"] is True and body["name"] == "a"
    assert body["updatedAt"] > created["updatedAt"]
    assert_error(api.patch(f"{coll}/{created['id']}", json={"name": None}), 400, "name")
    assert_error(api.patch(f"{coll}/{created['id']}", json={"id": "x"}), 400, "id")


def test_delete(api: Api, coll: str) -> None:
    created = api.post(coll, json={"name": "a"}).json()
    r = api.delete(f"{coll}/{created['id']}")
    assert r.status_code == 204 and r.content == b""
    assert_error(api.get(f"{coll}/{created['id']}"), 404)
    assert_error(api.delete(f"{coll}/{created['id']}"), 404)


def test_ids_malformed_unknown_foreign_and_wrong_collection(api: Api, coll: str) -> None:
    other_coll = next(c for c in COLLECTIONS if c != coll)
    mine = api.post(other_coll, json={"name": "mine"}).json()["id"]
    foreign = api.as_key("other-admin-key-0001").post(coll, json={"name": "f"}).json()["id"]
    for op in ("get", "patch", "delete"):
        kw = {"json": {"name": "z"}} if op == "patch" else {}
        assert_error(getattr(api, op)(f"{coll}/not-a-uuid", **kw), 400, "not a UUID")
        assert_error(getattr(api, op)(f"{coll}/{foreign}", **kw), 404)
        assert_error(getattr(api, op)(f"{coll}/{mine}", **kw), 404)
        assert_error(getattr(api, op)(f"{coll}/00000000-0000-4000-8000-00000000dead", **kw), 404)


def test_organization_of_another_org_is_403(api: Api, coll: str) -> None:
    assert_error(api.post(coll, json={"name": "x", "organizationId": OTHER}), 403)
    assert_error(api.get(coll, params={"organizationId": OTHER}), 403)
    assert api.get(coll, params={"organizationId": ACME}).status_code == 200


def members(api: Api, coll: str, set_id: str) -> set[str]:
    r = api.get(f"{coll}/{set_id}/members", params={"pageSize": 100})
    assert r.status_code == 200
    return {m["name"] for m in r.json()["items"]}


def test_members_add_remove_idempotent(api: Api, coll: str) -> None:
    profiles = api.ids("/profiles")
    s = api.post(coll, json={"name": "s"}).json()["id"]
    add = {"profileIds": [profiles["p1"], profiles["p2"]]}
    r = api.post(f"{coll}/{s}/members", json=add)
    assert r.status_code == 204 and r.content == b""
    assert members(api, coll, s) == {"p1", "p2"}
    assert api.post(f"{coll}/{s}/members", json=add).status_code == 204  # already members
    assert members(api, coll, s) == {"p1", "p2"}
    assert (
        api.delete(f"{coll}/{s}/members", json={"profileIds": [profiles["p1"]]}).status_code == 204
    )
    assert members(api, coll, s) == {"p2"}
    # not a member: still 204, no change
    assert (
        api.delete(f"{coll}/{s}/members", json={"profileIds": [profiles["p3"]]}).status_code == 204
    )
    assert members(api, coll, s) == {"p2"}
    page = api.get(f"{coll}/{s}/members").json()
    assert set(page["items"][0]) == {"id", "name", "organizationId", "createdAt", "updatedAt"}
    assert page["total"] == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"profileIds": []},
        {"profileIds": ["not-a-uuid"]},
        {"profileIds": "x"},
        {"profileIds": [f"00000000-0000-4000-8000-{i:012d}" for i in range(101)]},
        {"profileIds": ["00000000-0000-4000-8000-000000000001"], "extra": 1},
    ],
)
def test_member_bodies_rejected(api: Api, coll: str, body: dict) -> None:  # type: ignore[type-arg]
    s = api.post(coll, json={"name": "s"}).json()["id"]
    for method in ("post", "delete"):
        assert_error(getattr(api, method)(f"{coll}/{s}/members", json=body), 400)


def test_member_of_another_org_or_unknown_is_400_listing_ids(api: Api, coll: str) -> None:
    s = api.post(coll, json={"name": "s"}).json()["id"]
    mine = api.ids("/profiles")["p1"]
    foreign = api.as_key("other-admin-key-0001").ids("/profiles")["foreign"]
    unknown = "00000000-0000-4000-8000-00000000beef"
    r = api.post(f"{coll}/{s}/members", json={"profileIds": [mine, foreign, unknown]})
    assert_error(r, 400, foreign, unknown)
    assert mine not in r.json()["message"]
    assert members(api, coll, s) == set()  # nothing of the call was applied


def test_member_ops_on_unknown_set_are_404(api: Api, coll: str) -> None:
    mine = api.ids("/profiles")["p1"]
    unknown = "00000000-0000-4000-8000-00000000beef"
    assert_error(api.get(f"{coll}/{unknown}/members"), 404)
    assert_error(api.post(f"{coll}/{unknown}/members", json={"profileIds": [mine]}), 404)
    assert_error(api.get(f"{coll}/bad/members"), 400)


def test_deleting_a_profile_removes_it_from_every_pool_and_group(api: Api) -> None:
    profiles = api.ids("/profiles")
    sets = [(c, api.post(c, json={"name": "s"}).json()["id"]) for c in COLLECTIONS]
    for c, s in sets:
        api.post(f"{c}/{s}/members", json={"profileIds": [profiles["p1"], profiles["p2"]]})
    assert api.delete(f"/profiles/{profiles['p1']}").status_code == 204
    for c, s in sets:
        assert members(api, c, s) == {"p2"}


def test_deleting_a_set_keeps_its_profiles(api: Api, coll: str) -> None:
    profiles = api.ids("/profiles")
    s = api.post(coll, json={"name": "s"}).json()["id"]
    api.post(f"{coll}/{s}/members", json={"profileIds": [profiles["p1"]]})
    api.delete(f"{coll}/{s}")
    assert api.get(f"/profiles/{profiles['p1']}").status_code == 200
