"""Vault templates (docs/service/contract.md#vault-templates): derived keys, step rules,
presets, replace-on-PATCH."""

from __future__ import annotations

from typing import Any

import pytest

from agentform.rules.vault_templates import field_key
from tests.service.conftest import ACME, OTHER, Api, assert_error

LOGIN: dict[str, Any] = {
    "kind": "login",
    "name": "Shop login",
    "description": "the shop",
    "fields": [
        {"type": "username", "label": "User name", "required": True},
        {"type": "password", "label": "Password", "required": True, "hint": "from 1Password"},
        {"type": "api_key", "label": "API key", "required": False},
    ],
    "steps": [
        {"key": "sign-in", "title": "Sign in", "fieldKeys": ["USER_NAME", "PASSWORD"]},
        {"key": "read-me", "title": "Read", "instructions": "Look first", "fieldKeys": []},
    ],
}


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("API key", "API_KEY"),
        ("User name", "USER_NAME"),
        ("e-mail address", "E_MAIL_ADDRESS"),
        ("  2FA  code! ", "2FA_CODE"),
        ("CVV", "CVV"),
    ],
)
def test_field_key_is_upper_snake_of_label(label: str, key: str) -> None:
    assert field_key(label) == key


def test_create_and_read(api: Api) -> None:
    r = api.post("/vault/templates", json=LOGIN)
    assert r.status_code == 201
    t = r.json()
    assert t["organizationId"] == ACME and t["origin"] == "manual"
    assert [f["key"] for f in t["fields"]] == ["USER_NAME", "PASSWORD", "API_KEY"]
    assert t["fields"][1]["hint"] == "from 1Password" and "hint" not in t["fields"][0]
    assert t["steps"] == [*LOGIN["steps"][:1], {**LOGIN["steps"][1]}]
    assert api.get(f"/vault/templates/{t['id']}").json() == t


def _with(**changes: Any) -> dict[str, Any]:
    return {**LOGIN, **changes}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (_with(kind="note"), "kind"),
        (_with(name=""), "name"),
        (_with(name="n" * 201), "name"),
        (_with(fields=[]), "fields"),
        (_with(fields=[{"type": "pin", "label": "PIN", "required": True}]), "fields.0.type"),
        (_with(fields=[{"type": "text", "label": "x", "required": "yes"}]), "fields.0.required"),
        (_with(fields=[{"type": "text", "label": "A", "required": True, "key": "A"}]), "key"),
        (
            _with(fields=[{"type": "text", "label": "x", "required": True, "hint": "h" * 501}]),
            "hint",
        ),
        (
            _with(
                fields=[
                    {"type": "text", "label": "API key", "required": True},
                    {"type": "text", "label": "api-key", "required": True},
                ]
            ),
            "fields.1",
        ),
        (_with(fields=[{"type": "text", "label": "!!", "required": True}]), "fields.0.label"),
        (_with(steps=[{"key": "Sign In", "title": "t", "fieldKeys": ["PASSWORD"]}]), "key"),
        (_with(steps=[{"key": "a" * 65, "title": "t", "fieldKeys": ["PASSWORD"]}]), "key"),
        (_with(steps=[{"key": "a-", "title": "t", "fieldKeys": ["PASSWORD"]}]), "key"),
        (_with(steps=[{"key": "a", "title": "", "fieldKeys": ["PASSWORD"]}]), "title"),
        (
            _with(steps=[{"key": "a", "title": "t", "instructions": "i" * 4001, "fieldKeys": []}]),
            "instructions",
        ),
        (_with(steps=[{"key": "a", "title": "t", "fieldKeys": ["NOPE"]}]), "steps.0.fieldKeys"),
        (_with(steps=[{"key": "a", "title": "t", "fieldKeys": []}]), "steps.0.fieldKeys"),
        (
            _with(
                steps=[
                    {"key": "a", "title": "t", "fieldKeys": ["PASSWORD"]},
                    {"key": "b", "title": "t", "fieldKeys": ["PASSWORD"]},
                ]
            ),
            "steps.1.fieldKeys",
        ),
        (
            _with(
                steps=[
                    {"key": "a", "title": "t", "fieldKeys": ["PASSWORD"]},
                    {"key": "a", "title": "t", "fieldKeys": ["USER_NAME"]},
                ]
            ),
            "steps.1.key",
        ),
        (
            _with(
                steps=[
                    {"key": f"s{i}", "title": "t", "instructions": "i", "fieldKeys": []}
                    for i in range(21)
                ]
            ),
            "steps",
        ),
        (_with(origin="generated"), "origin"),
    ],
)
def test_create_rejects(api: Api, body: dict[str, Any], field: str) -> None:
    assert_error(api.post("/vault/templates", json=body), 400, field)


def test_twenty_steps_are_allowed(api: Api) -> None:
    steps = [
        {"key": f"s{i}", "title": "t", "instructions": "i", "fieldKeys": []} for i in range(20)
    ]
    assert api.post("/vault/templates", json=_with(steps=steps)).status_code == 201


def test_name_taken_is_409_on_create_and_rename(api: Api) -> None:
    api.post("/vault/templates", json=LOGIN)
    other = api.post("/vault/templates", json=_with(name="Other")).json()
    assert_error(api.post("/vault/templates", json=LOGIN), 409)
    assert_error(api.patch(f"/vault/templates/{other['id']}", json={"name": "Shop login"}), 409)
    # another organization may use the name
    assert (
        api.as_key("other-admin-key-0001").post("/vault/templates", json=LOGIN).status_code == 201
    )


def test_patch_replaces_lists_and_rechecks_steps(api: Api) -> None:
    t = api.post("/vault/templates", json=LOGIN).json()
    path = f"/vault/templates/{t['id']}"
    # dropping a field that a step names: the kept steps no longer hold
    fields = [{"type": "text", "label": "Token", "required": True}]
    assert_error(api.patch(path, json={"fields": fields}), 400, "steps.0.fieldKeys")
    r = api.patch(path, json={"fields": fields, "steps": [], "kind": "custom"})
    assert r.status_code == 200
    body = r.json()
    assert body["fields"] == [{**fields[0], "key": "TOKEN"}] and body["steps"] == []
    assert body["kind"] == "custom" and body["name"] == "Shop login"
    assert body["description"] == "the shop"
    assert "description" not in api.patch(path, json={"description": None}).json()
    assert_error(api.patch(path, json={"fields": None}), 400, "fields")
    assert_error(api.patch(path, json={"origin": "manual"}), 400, "origin")


def test_presets_listed_readable_and_read_only(api: Api) -> None:
    items = api.get("/vault/templates").json()["items"]
    presets = [t for t in items if t["origin"] == "generated"]
    assert {p["kind"] for p in presets} >= {"login", "api_key"}
    assert all("organizationId" not in p for p in presets)
    preset = presets[0]
    assert api.get(f"/vault/templates/{preset['id']}").json() == preset
    assert_error(api.patch(f"/vault/templates/{preset['id']}", json={"name": "mine"}), 403)
    assert_error(api.delete(f"/vault/templates/{preset['id']}"), 403)
    other = api.as_key("other-admin-key-0001").get("/vault/templates").json()["items"]
    assert preset in other


def test_list_search_and_org_scope(api: Api) -> None:
    mine = api.post("/vault/templates", json=LOGIN).json()
    foreign = (
        api.as_key("other-admin-key-0001")
        .post("/vault/templates", json=_with(name="Theirs"))
        .json()
    )
    names = {t["name"] for t in api.get("/vault/templates").json()["items"]}
    assert "Shop login" in names and "Theirs" not in names
    found = api.get("/vault/templates", params={"searchName": "shop"}).json()
    assert [t["id"] for t in found["items"]] == [mine["id"]]
    assert_error(api.get(f"/vault/templates/{foreign['id']}"), 404)
    assert_error(api.delete(f"/vault/templates/{foreign['id']}"), 404)
    assert_error(api.get("/vault/templates/not-an-id"), 400, "templateId")
    assert_error(api.get("/vault/templates", params={"organizationId": OTHER}), 403)


def test_delete(api: Api) -> None:
    t = api.post("/vault/templates", json=LOGIN).json()
    r = api.delete(f"/vault/templates/{t['id']}")
    assert r.status_code == 204 and r.content == b""
    assert_error(api.get(f"/vault/templates/{t['id']}"), 404)
