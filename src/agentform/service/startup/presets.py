"""Built-in vault templates: no organization, origin `generated`, read-only."""

from __future__ import annotations

from typing import Any

from agentform.service.models.vault_templates import TemplateFieldIn, TemplateStep
from agentform.service.store import vault_templates
from agentform.service.store.database import Conn
from agentform.service.store.vault_templates import build_template

PRESET_TIME = "2024-01-01T00:00:00.000000Z"

PRESETS: list[dict[str, Any]] = [
    {
        "id": "00000000-0000-4000-a000-000000000001",
        "kind": "login",
        "name": "Website login",
        "description": "Username and password for a website",
        "fields": [
            {"type": "url", "label": "Login URL", "required": True},
            {"type": "username", "label": "Username", "required": True},
            {"type": "password", "label": "Password", "required": True},
            {
                "type": "totp_seed",
                "label": "TOTP seed",
                "required": False,
                "hint": "Only when the site asks for a one-time code",
            },
        ],
        "steps": [
            {
                "key": "sign-in",
                "title": "Sign in",
                "fieldKeys": ["LOGIN_URL", "USERNAME", "PASSWORD"],
            },
            {"key": "second-factor", "title": "Second factor", "fieldKeys": ["TOTP_SEED"]},
        ],
    },
    {
        "id": "00000000-0000-4000-a000-000000000002",
        "kind": "api_key",
        "name": "API key",
        "description": "A key for an HTTP API",
        "fields": [
            {"type": "api_key", "label": "API key", "required": True},
            {"type": "url", "label": "Base URL", "required": False},
        ],
        "steps": [],
    },
    {
        "id": "00000000-0000-4000-a000-000000000003",
        "kind": "card",
        "name": "Payment card",
        "description": None,
        "fields": [
            {"type": "cardholder_name", "label": "Cardholder name", "required": True},
            {"type": "card_number", "label": "Card number", "required": True},
            {"type": "card_expiry", "label": "Expiry", "required": True},
            {"type": "card_cvv", "label": "CVV", "required": True},
        ],
        "steps": [],
    },
]


def install_presets(conn: Conn) -> None:
    for preset in PRESETS:
        vault_templates.ensure_preset(
            conn,
            preset["id"],
            preset["kind"],
            preset["name"],
            preset["description"],
            *_fields_and_steps(preset),
            PRESET_TIME,
        )


def _fields_and_steps(preset: dict[str, Any]) -> tuple[list[Any], list[TemplateStep]]:
    steps = [TemplateStep.model_validate(s) for s in preset["steps"]]
    fields = [TemplateFieldIn.model_validate(f) for f in preset["fields"]]
    return build_template(fields, steps), steps
