"""Agents (read-only) and profiles (docs/service/contract.md#agents-and-profiles),
including the /agent-profiles alias."""

from __future__ import annotations

import pytest

from tests.service.conftest import ACME, OTHER, Api, assert_error


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
    # always a string (docs/service/contract.md#agents-and-profiles)
    assert cleared["description"] == ""
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


def test_agents_and_context_carry_the_public_service_fields(api: Api) -> None:
    context = api.get("/context").json()
    assert context["organizations"] == [{"id": ACME, "name": context["organizationName"]}]
    assert context["userId"] and context["email"].endswith(".invalid")
    agents = api.get("/agents").json()["items"]
    assert {a["userId"] for a in agents} == {context["userId"]}  # the organization's user
    other = api.as_key("other-admin-key-0001").get("/context").json()
    assert other["userId"] != context["userId"] and other["email"] != context["email"]


def test_profiles_have_the_public_sdk_fields_with_defaults(api: Api) -> None:
    created = api.post("/profiles", json={"name": "plain"}).json()
    assert created["description"] == ""
    assert (created["tracingEnabled"], created["stickyIP"]) == (False, False)
    assert created["inboxEmail"] == f"{created['id']}@inbox.invalid"
    assert created["vaultItems"] == created["credentials"] == created["cookies"] == []
    listed = {p["name"]: p for p in api.get("/profiles").json()["items"]}
    assert listed["plain"] == created
    foreign = api.as_key("other-admin-key-0001").get("/profiles").json()["items"][0]
    assert foreign["description"] == ""  # made by the seed with none


COOKIE = {
    "name": "session",
    "key": "sid",
    "value": "abc",
    "domain": "shop.example",
    "secure": True,
    "sameSite": "Strict",
    "httpOnly": True,
}


def test_profile_creates_and_updates_accept_the_sdk_fields(api: Api) -> None:
    body = {
        "name": "full",
        "tracingEnabled": True,
        "stickyIP": True,
        "inboxEmail": "bot@mail.example",
        "credentials": [{"name": "shop password", "data": "hunter2-secret"}],
        "cookies": [COOKIE],
    }
    r = api.post("/profiles", json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert "hunter2-secret" not in r.text  # a credential's value is never answered
    assert [(c["name"], c["data"]) for c in created["credentials"]] == [
        ("SHOP PASSWORD", "********")
    ]
    assert created["cookies"][0]["value"] == "abc" and created["cookies"][0]["id"]
    assert (created["tracingEnabled"], created["stickyIP"]) == (True, True)
    assert created["inboxEmail"] == "bot@mail.example"
    patched = api.patch(
        f"/profiles/{created['id']}", json={"stickyIP": False, "cookies": [], "credentials": []}
    ).json()
    assert patched["stickyIP"] is False and patched["tracingEnabled"] is True
    assert patched["cookies"] == patched["credentials"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "vaultItems": [{"id": "1"}]}, "vaultItems"),
        ({"name": "x", "inboxEmail": "not an address"}, "inboxEmail"),
        ({"name": "x", "credentials": [{"name": "a"}]}, "credentials"),
        ({"name": "x", "cookies": [{**COOKIE, "sameSite": "Sometimes"}]}, "cookies"),
        ({"name": "x", "tracingEnabled": "yes"}, "tracingEnabled"),
    ],
)
def test_bad_sdk_fields_are_400(api: Api, body: dict, field: str) -> None:  # type: ignore[type-arg]
    assert_error(api.post("/profiles", json=body), 400, field)
