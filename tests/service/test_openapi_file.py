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


def test_the_global_security_scheme_is_declared_at_the_top(app: FastAPI) -> None:
    doc = app.openapi()
    assert doc["security"] == [{"ApiKey": []}, {"ServiceAgentsApiKey": []}]
    assert doc["components"]["securitySchemes"]["ApiKey"]["name"] == "X-Api-Key"
    # A presigned link and the documentation receiver take no key: they say so.
    assert doc["paths"]["/execution-files/{fileId}"]["get"]["security"] == []
    assert doc["paths"]["/webhooks/example-batch"]["post"]["security"] == []


def test_the_cross_field_rules_json_schema_can_state_are_stated(app: FastAPI) -> None:
    doc = app.openapi()
    execute = doc["components"]["schemas"]["ExecuteRequest"]
    assert execute["not"] == {"required": ["agentProfileId", "agentProfilePoolId"]}
    listing = doc["paths"]["/agents/v2/executions"]["get"]["parameters"]
    (metadata,) = [p for p in listing if p["name"] == "metadata"]
    assert metadata["style"] == "form" and metadata["explode"] is True
    assert metadata["schema"]["required"] == ["metadataKey", "metadataValue"]
    assert not [p for p in listing if p["name"] in ("metadataKey", "metadataValue")]
    label = doc["components"]["schemas"]["TemplateFieldIn"]["properties"]["label"]
    assert label["pattern"] == "[A-Za-z0-9]"
