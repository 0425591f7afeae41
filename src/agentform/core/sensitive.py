"""Sensitive values: a type, not a string to search for later.

`secret('NAME')` in a workspace file gives a `Sensitive`: an object that holds
the value but is not a `str`, so it cannot be concatenated, formatted or
JSON-encoded by accident (`str()` and `format()` give "(sensitive)", `json.dumps`
refuses it). It travels through the desired models, the plan's values and the
diff; every view masks it; only `reveal` — called where a request body is
sent — gives the value.

A Sensitive also knows how it is written in the files: its `parts`, plain text
and `SecretRef`s, so export can write `{{ secret("NAME") }}` and a saved plan
can hold `((secret:NAME))` instead of the value.

The values of one run, and scrubbing them from text, are `core/secrets.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, ValidationError
from pydantic_core import core_schema

from agentform.core.errors import UnresolvedSecret
from agentform.core.problems import AT, parameter_of, rule_error

MASK = "(sensitive)"


@dataclass(frozen=True)
class SecretRef:
    """Where a secret's value stands in a Sensitive; `previous`: an earlier value of it."""

    name: str
    previous: bool = False

    def source(self, quote: str = '"') -> str:
        return "{{ secret(" + quote + self.name + quote + ") }}"

    def marker(self) -> str:
        return f"((secret:{self.name}:previous))" if self.previous else f"((secret:{self.name}))"


Part = str | SecretRef


class Sensitive:
    """A string value that must never be shown; compares and hashes as its value."""

    __slots__ = ("_value", "parts")

    def __init__(self, value: str | None, parts: tuple[Part, ...] | None = None) -> None:
        self._value = value  # None: not resolved (an unset secret, export only)
        self.parts = parts  # how it is written with secret(); None when not known

    # -- the value, for the one place that sends it ----------------------------
    def reveal(self) -> str:
        if self._value is None:
            names = ", ".join(sorted(self.secret_names())) or "a secret"
            raise UnresolvedSecret(f"secret {names} is not set")
        return self._value

    @property
    def resolved(self) -> bool:
        return self._value is not None

    def secret_names(self) -> set[str]:
        return {p.name for p in self.parts or () if isinstance(p, SecretRef)}

    # -- safe forms ------------------------------------------------------------
    def source(self, quote: str = '"') -> str | None:
        """As written in a workspace file (`{{ secret("NAME") }}`), or None if unknown."""
        if self.parts is None:
            return None
        return "".join(p.source(quote) if isinstance(p, SecretRef) else p for p in self.parts)

    def marked(self) -> str:
        """The form saved plans hold: `((secret:NAME))` for each secret, else the mask."""
        if self.parts is None:
            return MASK
        return "".join(p.marker() if isinstance(p, SecretRef) else p for p in self.parts)

    def __str__(self) -> str:
        return MASK

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    # -- comparisons by value, so a Sensitive diffs like the string it holds ---
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sensitive):
            return self._value == other._value
        if isinstance(other, str):
            return self._value == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __lt__(self, other: object) -> bool:
        return _order(self) < _order(other)

    def __bool__(self) -> bool:
        return self._value != ""

    def __copy__(self) -> Sensitive:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Sensitive:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a sensitive value cannot be pickled")

    # -- pydantic: kept as is in models, masked by any JSON dump -----------------
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.is_instance_schema(
            cls, serialization=core_schema.plain_serializer_function_ser_schema(lambda v: v)
        )


def _order(value: object) -> str:
    if isinstance(value, Sensitive):
        return value._value or ""
    return str(value)


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Types that are never a Sensitive nor hold one: returned at the cost of one lookup
(every request's query and body go through `reveal`)."""


def _replaced(value: Any, how: Callable[[Sensitive], Any]) -> Any:
    """`value` (JSON-like) with each Sensitive in it replaced by `how(it)`."""
    if type(value) in _LEAVES:
        return value
    if isinstance(value, Sensitive):
        return how(value)
    if isinstance(value, dict):
        return {k: _replaced(v, how) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replaced(v, how) for v in value]
    return value


def reveal(value: Any) -> Any:
    """`value` with every Sensitive replaced by its value: only for a request being sent."""
    return _replaced(value, Sensitive.reveal)


def contains_sensitive(value: Any) -> bool:
    if isinstance(value, Sensitive):
        return True
    if isinstance(value, dict):
        return any(contains_sensitive(v) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(contains_sensitive(v) for v in value)
    return False


def masked(value: Any) -> Any:
    """A JSON fallback for views: every Sensitive becomes the mask."""
    if isinstance(value, Sensitive):
        return MASK
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def as_marked(value: Any) -> Any:
    """A JSON fallback for saved plans: `((secret:NAME))` markers, never values."""
    if isinstance(value, Sensitive):
        return value.marked()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def json_safe(value: Any) -> Any:
    """`value` with each Sensitive as its `((secret:NAME))` markers (or the mask): what
    a model's JSON holds, so no JSON dump of a plan can carry or choke on a value."""
    return _replaced(value, Sensitive.marked)


def shown(value: Any) -> str:
    """A value in a message: quoted when plain, the mask when sensitive."""
    return MASK if isinstance(value, Sensitive) else f"'{value}'"


# -- pydantic fields that accept a Sensitive ------------------------------------


class AllowSensitive:
    """Validates a field as the type `inner` says, and accepts Sensitive values in
    it (a str, or the values of a map such as headers): they are checked by their
    values, and kept marked; an error never carries a value. An unresolved secret
    (export with the variable unset) is checked as a one-letter stand-in."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        def validate(value: Any, check: Any) -> Any:
            if not contains_sensitive(value):
                return check(value)
            try:
                check(_stand_in(value))
            except ValidationError as exc:
                # Every error, each at its own place in the value (a header of a map), as
                # a rule's problems part by part: the stand-in's values never leave here.
                found = [at for err in exc.errors() for at in _problems_at(err)]
                detail = "; ".join(f"{parameter_of(part)}: {d}" for part, d in found)
                raise rule_error(detail, at=found) from None
            return value

        return core_schema.no_info_wrap_validator_function(
            validate,
            handler.generate_schema(self.inner),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda v: v),
        )


def _problems_at(error: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(part of the value, detail) of each problem one error says."""
    loc = tuple(error.get("loc", ()))
    found = (error.get("ctx") or {}).get(AT)
    if found:
        return [((*loc, *part), detail) for part, detail in found]
    return [(loc, error["msg"])]


def _stand_in(value: Any) -> Any:
    """`value` with each Sensitive as its value (an unresolved one as "x"), to check."""
    return _replaced(value, lambda s: s.reveal() if s.resolved else "x")


Text = Annotated[str | Sensitive, AllowSensitive(str)]
"""Free text that may come from secret(); `Annotated[str | Sensitive,
AllowSensitive(T)]` is the same with the constraints of the str type T."""


def plain_texts(value: Any) -> Iterator[str]:
    """Every string of a JSON-like value that is not Sensitive."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from plain_texts(key)
            yield from plain_texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from plain_texts(item)
