"""The checked-in OpenAPI document matches what the service serves."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from agentform.service.http.openapi import render_openapi

CHECKED_IN = Path(__file__).parents[2] / "schemas" / "agent-service.openapi.json"


def test_schemas_file_is_up_to_date(app: FastAPI) -> None:
    assert CHECKED_IN.read_text() == render_openapi(app), (
        "schemas/agent-service.openapi.json is stale: run `make schemas`"
    )
