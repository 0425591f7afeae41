"""Agents (read-only) and profiles (API.md §5), including the /agent-profiles alias."""

from __future__ import annotations

import pytest

from .conftest import ACME, OTHER, Api, assert_error


def test_agents_list_and_get(api: Api) -> None:
    body = api.get("/agents").json()
    assert [a["name"] for a in body["items"]] == ["checkout-agent", "support-agent"]
    checkout = body["items"][0]
    assert checkout["versions"] == [1, 2] and checkout["publishedVersion"] == 2
    assert checkout["organizationId"] == ACME
    assert api.get(f"/agents/{checkout['id']}").json() == checkout
    assert body["items"][1]["publishedVersion"] == 1  # default: the highest version
    assert api.get("/agents", params={"searchName": "SUPP"}).json()["total"] == 1
    other_agent = api.as_key("other-admin-key-0001").ids("/agents")["other-agent"]
    assert_error(api.get(f"/agents/{other_agent}"), 404)
    assert_error(api.get("/agents/123"), 400, "agentId")


@pytest.mark.parametrize("base", ["/profiles", "/agent-profiles"])
def test_profile_crud(api: Api, base: str) -> None:
    r = api.post(base, json={"name": "new", "description": "d", "organizationId": ACME})
    assert r.status_code == 201
    created = r.json()
    assert created["name"] == "new" and created["description"] == "d"
    assert api.get(f"/profiles/{created['id']}").json() == created
    assert api.get(f"/agent-profiles/{created['id']}").json() == created
    patched = api.patch(f"{base}/{created['id']}", json={"name": "renamed"}).json()
    assert patched["name"] == "renamed" and patched["description"] == "d"
    cleared = api.patch(f"{base}/{created['id']}", json={"description": None}).json()
    assert cleared["description"] is None
    assert api.delete(f"{base}/{created['id']}").status_code == 204
    assert_error(api.get(f"{base}/{created['id']}"), 404)


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"name": ""}, 400, "name"),
        ({"name": "x" * 256}, 400, "name"),
        ({"name": "x", "description": "d" * 1001}, 400, "description"),
        ({"name": "x", "kind": "bot"}, 400, "kind"),
        ({"name": "p1"}, 409, "p1"),
        ({"name": "x", "organizationId": OTHER}, 403, "organizationId"),
    ],
)
def test_profile_create_errors(api: Api, body: dict, status: int, field: str) -> None:  # type: ignore[type-arg]
    assert_error(api.post("/profiles", json=body), status, field)


def test_profile_rename_to_taken_name_is_409(api: Api) -> None:
    ids = api.ids("/profiles")
    assert_error(api.patch(f"/profiles/{ids['p2']}", json={"name": "p1"}), 409)
    assert_error(api.patch(f"/profiles/{ids['p2']}", json={"name": ""}), 400, "name")


def test_profile_of_another_org_is_404(api: Api) -> None:
    foreign = api.as_key("other-admin-key-0001").ids("/profiles")["foreign"]
    for method in ("get", "delete"):
        assert_error(getattr(api, method)(f"/profiles/{foreign}"), 404)
    assert_error(api.patch(f"/profiles/{foreign}", json={"name": "x"}), 404)
