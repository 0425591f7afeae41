"""The workspace file format as pydantic models, assembled from the registered kinds.

`document_model()` is what every YAML file is validated against and what the
JSON Schema in `schemas/` is generated from; `allowed_keys` walks it to offer
"did you mean" for a misspelt key.
"""

from __future__ import annotations

import types
import uuid
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic_core import PydanticCustomError

from agentform.api.endpoint_url import endpoint_problem
from agentform.kinds.base import top_level_kinds

EXTENSION_SCHEMA: dict[str, JsonValue] = {
    "description": "Ignored: a place for YAML anchors that the file's lists merge "
    "(`x-defaults: &defaults {…}`, then `<<: *defaults`)"
}
SETTINGS = (
    "workspace",
    "endpoint",
    "organizationId",
    "prune",
    "protect",
    "vars",
    "allowEnv",
    "owns",
    "moved",
)


class MovedEntry(BaseModel):
    """One rename: the live object `from` is the one the files declare as `to`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(
        alias="from",
        max_length=1000,
        description="KIND/NAME of the live object as it is named now (batches: KIND/AGENT/NAME)",
        examples=["profilePools/checkout-old"],
    )
    to: str = Field(
        max_length=1000,
        description="KIND/NAME of the object as the files declare it",
        examples=["profilePools/checkout-eu"],
    )


def _endpoint(url: str) -> str:
    """Checked where it is written (file:line), by the rule --endpoint is checked by."""
    if problem := endpoint_problem(url):
        raise PydanticCustomError("endpoint", "{problem}", {"problem": problem})
    return url


Endpoint = Annotated[str, AfterValidator(_endpoint)]

MAX_GLOBS = 100  # per kind in owns: validate --all compares them pairwise
MAX_MOVES = 1000
Glob = Annotated[str, Field(min_length=1, max_length=255)]


@cache
def document_model() -> type[BaseModel]:
    kinds = top_level_kinds()
    kind_name: Any = Literal[tuple(k.name for k in kinds)]
    fields: dict[str, Any] = {
        "workspace": (
            str | None,
            Field(None, description="Name of the workspace (agentform.yaml)"),
        ),
        "endpoint": (
            Endpoint | None,
            Field(None, description="Base URL of the Agent Service (…/agents/v2), or `local`"),
        ),
        "organizationId": (uuid.UUID | None, None),
        "prune": (
            list[kind_name] | None,
            Field(None, description="Kinds whose undeclared live objects are deleted"),
        ),
        "protect": (
            dict[kind_name, list[str]] | None,
            Field(None, description="Name globs per kind that are never deleted"),
        ),
        "owns": (
            dict[kind_name, Annotated[list[Glob], Field(max_length=MAX_GLOBS)]] | None,
            Field(
                None,
                description="Name globs per kind this workspace manages; others are never "
                "planned (default: everything; a kind left out: none of it)",
            ),
        ),
        "moved": (
            Annotated[list[MovedEntry], Field(max_length=MAX_MOVES)] | None,
            Field(None, description="Renames: each live object `from` becomes `to` in place"),
        ),
        "vars": (dict[str, Any] | None, Field(None, description="Template variables")),
        "allowEnv": (
            list[str] | None,
            Field(
                None,
                description="Environment variables env() may read, besides AGENTFORM_VAR_*",
            ),
        ),
    }
    for kind in kinds:
        fields[kind.name] = (list[kind.desired_model] | None, None)  # type: ignore[name-defined]
    return create_model(
        "WorkspaceFile",
        __config__=ConfigDict(
            extra="forbid",
            title="agentform workspace file",
            json_schema_extra={"patternProperties": {"^x-": EXTENSION_SCHEMA}},
        ),
        **fields,
    )


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    if origin in (list, tuple, Union, types.UnionType) or origin is not None:
        return [m for arg in get_args(annotation) for m in _models_in(arg)]
    return []


def allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The field names valid at the mapping that holds `loc[-1]`."""
    models = [document_model()]
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        nxt: list[type[BaseModel]] = []
        for model in models:
            info = next(
                (i for n, i in model.model_fields.items() if str(part) in (n, i.alias)), None
            )
            if info is not None:
                nxt += _models_in(info.annotation)
        models = nxt
    # a field is suggested as the files write it (`from`, not the `from_` it is held in)
    return sorted({info.alias or name for m in models for name, info in m.model_fields.items()})
