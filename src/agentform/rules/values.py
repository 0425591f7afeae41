"""Bounds on the values both halves accept, written once (docs/service/limits.md).

A request body or a workspace file is written by someone else: the service
serves many organizations, and a workspace is written by whoever opens a pull
request. These types refuse what would otherwise be stored and break later:

- `PlainName`: a name that is not blank and holds no control character (a NUL,
  a newline or an escape would end up in logs, terminals and file names);
- `BoundedJson`: a JSON object nested at most `MAX_JSON_DEPTH` levels, whose
  numbers are finite (Python's JSON reads `NaN` and `1e999`, which no JSON
  writer can write back: they were stored as null, or failed on the way out);
- `moment_problem`: a date-time within the years the service stores (1970 to 9999);
- `unencodable_at`: text UTF-8 cannot encode (a lone surrogate such as `\\ud800`,
  which JSON's `\\u` escapes and YAML's can write): stored, it broke every list
  that served it. The service refuses it at the door; `replace_unencodable`
  serves rows stored before that with U+FFFD in its place.

Each is a pydantic annotation, so a problem is a 400 naming the field in the
service and a diagnostic at file:line in the provisioner's `validate`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from agentform.core.problems import rule_error

MAX_JSON_DEPTH = 64
"""Levels of objects and arrays a value may nest (the object itself is level 1)."""

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)

# Control characters (Unicode category Cc: C0, DEL, C1); the pattern the OpenAPI
# document states says the same for a generator.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NAME_MAX_LENGTH = 255
"""The most characters any name has (a profile's, a pool's, an agent's...)."""
NAME_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"


def _control_problem(text: str) -> str | None:
    control = _CONTROL.search(text)
    if control is None:
        return None
    character = unicodedata.name(control.group(), f"U+{ord(control.group()):04X}")
    return f"must not hold control characters (found {character} at {control.start()})"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a name (of a pool, group, template, integration, batch...)."""
    return "must not be blank" if not name.strip() else _control_problem(name)


def text_problem(text: str) -> str | None:
    """Why `text` (a one-line value such as an inbox address) cannot be stored."""
    return _control_problem(text)


def _checked(problem_of: Callable[[str], str | None]) -> AfterValidator:
    def check(text: str) -> str:
        if problem := problem_of(text):
            raise rule_error(problem)
        return text

    return AfterValidator(check)


PlainName = _checked(name_problem)
"""Added to a string type: `Annotated[str, StringConstraints(...), PlainName, NAME_SCHEMA]`."""
NAME_SCHEMA = Field(json_schema_extra={"pattern": NAME_PATTERN})
"""What the OpenAPI document and the workspace schema say of such a name."""
PlainText = _checked(text_problem)
"""Added to a one-line string type: no control characters, blank allowed."""


def json_problem(value: Any) -> str | None:
    """Why `value` (parsed JSON) cannot be stored: too deep, or a number that is not finite."""
    # Iterative, so a hostile depth cannot reach Python's recursion limit here.
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        current, depth, path = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            where = f" at {path.lstrip('.')}" if path else ""
            return f"numbers must be finite (found {current}{where})"
        if isinstance(current, dict | list):
            if depth > MAX_JSON_DEPTH:
                return f"must not nest more than {MAX_JSON_DEPTH} levels of objects and arrays"
            items = current.items() if isinstance(current, dict) else enumerate(current)
            stack.extend((child, depth + 1, f"{path}.{key}") for key, child in items)
    return None


def _check_json(value: Any) -> Any:
    problem = json_problem(value)
    if problem:
        raise rule_error(problem)
    return value


BoundedJson = AfterValidator(_check_json)
"""Added to a JSON type: `Annotated[dict[str, Any], BoundedJson]`."""


OUT_OF_RANGE = "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z"


def moment_problem(moment: datetime) -> str | None:
    """Why an aware `moment` is outside the years the service stores, or None."""
    return None if EARLIEST <= moment <= LATEST else OUT_OF_RANGE


_SURROGATE = re.compile("[\ud800-\udfff]")


def unencodable_problem(text: str) -> str | None:
    """Why `text` cannot be encoded as UTF-8, or None."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    point = f"U+{ord(found.group()):04X}"
    return f"must be Unicode text (found the lone surrogate {point} at {found.start()})"


def unencodable_at(value: Any) -> tuple[str, str] | None:
    """The first string of `value` (parsed JSON or YAML: keys too) that UTF-8 cannot
    encode, as (its dotted path, the problem); None when every one can."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:  # iterative: a hostile depth cannot reach the recursion limit
        current, path = stack.pop()
        if isinstance(current, str):
            problem = unencodable_problem(current)
            if problem:
                return path.lstrip("."), problem
        elif isinstance(current, dict):
            for key, child in current.items():
                problem = unencodable_problem(key) if isinstance(key, str) else None
                if problem:
                    return path.lstrip("."), f"has a key that {problem}"
                stack.append((child, f"{path}.{key}"))
        elif isinstance(current, list):
            stack.extend((child, f"{path}.{i}") for i, child in enumerate(current))
    return None


def replace_unencodable(value: Any) -> Any:
    """`value` with every lone surrogate of its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_unencodable(k): replace_unencodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_unencodable(item) for item in value]
    return value


JsonObject = Annotated[dict[str, Any], BoundedJson]
"""A free JSON object (`inputs`, `dynamicData`): bounded depth, finite numbers."""
