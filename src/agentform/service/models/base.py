"""What every request body shares: strict parsing, ids from strings, PATCH fields."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

# Request ids: parsed from JSON strings (strict mode would refuse a str for a UUID).
Id = Annotated[uuid.UUID, Field(strict=False)]


def omittable() -> Any:
    """A PATCH field that may be left out but not sent as null (null is a 400).

    Pydantic does not validate defaults, so leaving the field out gives None
    while an explicit null fails the (non-nullable) type; the OpenAPI document
    then shows the field as optional and not nullable, which is the truth.
    """
    return Field(default=None)


class Request(BaseModel):
    """Request bodies: strict types, and an unknown field is a 400 naming it."""

    model_config = ConfigDict(extra="forbid", strict=True)
