"""The service's OpenAPI document: FastAPI's, with the error shape
(docs/service/contract.md#errors).

FastAPI documents a 422 validation error on every operation; this service
answers 400 instead, so the document is rewritten to say so, and every
operation lists its error statuses with the `{code, message}` body.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from agentform.rules.paths import API_PATH
from agentform.service.http.auth import KEY_SCHEMES
from agentform.service.http.gate import ServiceRoute
from agentform.service.models.errors import ErrorBody

ERROR_STATUSES = {
    "400": "Invalid request: malformed id, unknown field, wrong type, out of range",
    "401": "Missing or invalid API key",
    "403": "The API key may not do this",
    "404": "Not found",
    "409": "Name already taken, or not allowed in the current state",
    "429": "Rate limited; see Retry-After",
    "500": "Server error",
}


def build_openapi(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(title=app.title, version=app.version, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))  # ErrorDetail
    schemas["ErrorBody"] = error_schema
    error_ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    # The global scheme (X-Api-Key), and the header the public doc shows on some
    # operations; an operation that takes no key says so with an empty list.
    schemes: list[dict[str, list[str]]] = [{name: []} for name in KEY_SCHEMES]
    doc["security"] = schemes
    doc["components"]["securitySchemes"] = {
        name: {"in": "header", "name": header, "type": "apiKey"}
        for name, header in KEY_SCHEMES.items()
    }
    keyed = _keyed_operations(app)
    for path, path_item in doc.get("paths", {}).items():
        for method, operation in path_item.items():
            operation["security"] = list(schemes) if (method, path) in keyed else []
            if (method, path) == ("get", EXECUTIONS_PATH):
                _metadata_pair(operation)
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status, description in ERROR_STATUSES.items():
                responses.setdefault(status, {"description": description, "content": error_ref})
    return doc


def _keyed_operations(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every operation that takes a key: the gated ones."""
    return {
        (method.lower(), route.path)
        for route in app.routes
        if isinstance(route, ServiceRoute)
        for method in route.methods or ()
    }


EXECUTIONS_PATH = f"{API_PATH}/executions"
METADATA_PAIR = ("metadataKey", "metadataValue")


def _metadata_pair(operation: dict[str, Any]) -> None:
    """`metadataKey` and `metadataValue` go together: as one exploded object
    parameter (the same query string, `?metadataKey=K&metadataValue=V`) whose
    schema can say so, which two separate parameters cannot."""
    parameters = operation.get("parameters", [])
    pair = {p["name"]: p for p in parameters if p["name"] in METADATA_PAIR}
    if set(pair) != set(METADATA_PAIR):
        return
    operation["parameters"] = [p for p in parameters if p["name"] not in METADATA_PAIR]
    operation["parameters"].append(
        {
            "name": "metadata",
            "in": "query",
            "style": "form",
            "explode": True,
            "required": False,
            "description": "Executions whose metadata has key metadataKey with value "
            "metadataValue: both or neither.",
            "schema": {
                "type": "object",
                "properties": {name: {"type": "string"} for name in METADATA_PAIR},
                "required": list(METADATA_PAIR),
                "additionalProperties": False,
            },
        }
    )


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def render_openapi(app: FastAPI) -> str:
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"
