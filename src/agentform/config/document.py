"""The workspace file format as pydantic models, assembled from the registered kinds.

`document_model()` is what every YAML file is validated against and what the
JSON Schema in `schemas/` is generated from; `allowed_keys` walks it to offer
"did you mean" for a misspelt key.
"""

from __future__ import annotations

import re
import types
import uuid
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
    create_model,
)
from pydantic_core import PydanticCustomError

from agentform.api.endpoint_url import endpoint_problem
from agentform.config.environments import (
    KEY_VARIABLE_PATTERN,
    MAX_ENVIRONMENTS,
    MAX_VAR_FILES,
    NAME_PATTERN,
    OVERRIDABLE,
)
from agentform.kinds.order import top_level_kinds
from agentform.rules.values import NAME_MAX_LENGTH

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
    "environments",
)


class MovedEntry(BaseModel):
    """One rename: the live object `from` is the one the files declare as `to`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
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
Glob = Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH)]


def _environment_name(name: str) -> str:
    if not re.fullmatch(NAME_PATTERN, name):
        raise PydanticCustomError(
            "environment_name",
            "'{name}' is not an environment's name (letters, digits, _, . and -, up to 63)",
            {"name": name},
        )
    return name


def _variable_name(name: str) -> str:
    if not re.fullmatch(KEY_VARIABLE_PATTERN, name):
        raise PydanticCustomError(
            "variable_name",
            "'{name}' is not an environment variable's name (letters, digits and _)",
            {"name": name},
        )
    return name


def settings_fields(kind_name: Any) -> dict[str, Any]:
    """The settings of the root file; an environment overrides those OVERRIDABLE names."""
    return {
        "workspace": (
            str | None,
            Field(None, description="Name of the workspace (agentform.yaml)"),
        ),
        "endpoint": (
            Endpoint | None,
            Field(None, description="Base URL of the Agent Service (…/agents/v2), or `local`"),
        ),
        "organizationId": (
            uuid.UUID | None,
            Field(None, description="The organization the key must reach (a UUID)"),
        ),
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


def _environment_model(settings: dict[str, Any]) -> type[BaseModel]:
    """One entry of `environments:`: the settings it overrides, its vars, var files
    and the environment variable holding its API key."""
    fields = {name: settings[name] for name in OVERRIDABLE}
    fields["vars"] = settings["vars"]
    fields["varFiles"] = (
        list[str] | None,
        Field(None, max_length=MAX_VAR_FILES, description="Var files, relative to the root"),
    )
    fields["apiKeyEnv"] = (
        Annotated[str, AfterValidator(_variable_name)] | None,
        Field(None, description="Environment variable holding the API key (AGENTFORM_API_KEY)"),
    )
    return create_model(
        "Environment", __config__=ConfigDict(extra="forbid", title="environment"), **fields
    )


@cache
def document_model() -> type[BaseModel]:
    kinds = top_level_kinds()
    kind_name: Any = Literal[tuple(k.name for k in kinds)]
    fields = settings_fields(kind_name)
    env_name: Any = Annotated[
        str,
        AfterValidator(_environment_name),
        WithJsonSchema({"type": "string", "pattern": NAME_PATTERN}),
    ]
    environment: Any = _environment_model(fields)
    fields["environments"] = (
        dict[env_name, environment] | None,
        Field(None, max_length=MAX_ENVIRONMENTS, description="Targets: name -> overrides"),
    )
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
    map_key = False  # the part is a key of a mapping (an environment's name), not a field
    for part in loc[:-1]:
        if isinstance(part, int) or map_key:
            map_key = False
            continue
        nxt: list[type[BaseModel]] = []
        for model in models:
            info = next(
                (i for n, i in model.model_fields.items() if str(part) in (n, i.alias)), None
            )
            if info is not None:
                nxt += _models_in(info.annotation)
                map_key = map_key or _is_mapping(info.annotation)
        models = nxt
    # a field is suggested as the files write it (`from`, not the `from_` it is held in)
    return sorted({info.alias or name for m in models for name, info in m.model_fields.items()})


def _is_mapping(annotation: Any) -> bool:
    if get_origin(annotation) is dict:
        return True
    return get_origin(annotation) in (Union, types.UnionType) and any(
        _is_mapping(arg) for arg in get_args(annotation)
    )
