"""Models as JSON data whose secret() values stay `Sensitive`.

pydantic's JSON mode cannot serialise a `Sensitive` (on purpose: no JSON dump may
carry a value by accident). Where a model's data becomes a request (a batch item,
an execute request), its secret() values must reach the request marked, so the
views mask them by type and only the request sent holds the value.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentform.core.sensitive import Sensitive


def model_data(model: BaseModel, **options: Any) -> Any:
    """`model.model_dump(mode="json", **options)`, each Sensitive kept as it is."""
    try:
        return model.model_dump(mode="json", **options)
    except PydanticSerializationError:  # a Sensitive somewhere: the rare, slower way
        return _jsonable(model.model_dump(**options))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, Sensitive):
        return value
    return to_jsonable_python(value)
