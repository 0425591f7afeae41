"""Immutable JSON-like values, so a Plan is frozen all the way down.

`freeze` turns dicts into `FrozenDict` (a dict that refuses every change, so
json, pydantic and yaml still write it as a mapping) and lists into tuples.
`thaw` is its inverse, for the one place that must build a request body.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

from pydantic import AfterValidator, PlainSerializer

from agentform.core.sensitive import json_safe


class FrozenDict(dict[Any, Any]):
    """A dict that cannot be changed after it is made; its values are frozen too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, value in dict.items(self):
            dict.__setitem__(self, key, freeze(value))

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this value is part of a plan and cannot be changed")

    __setitem__ = __delitem__ = _refuse
    update = pop = popitem = clear = setdefault = _refuse
    __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[Any, Any]]]:
        return (FrozenDict, (dict(self),))


def freeze(value: Any) -> Any:
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, dict):
        return FrozenDict(value)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


FrozenJson = Annotated[Any, AfterValidator(freeze), PlainSerializer(json_safe, when_used="json")]
"""A JSON-like value (body, shown state) stored frozen in a model."""

FrozenMap = Annotated[dict[str, Any], AfterValidator(freeze)]
"""A mapping of names to JSON-like values, stored frozen (hashable) in a model."""
