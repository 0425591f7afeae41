"""Problems a rule finds: the parameter at fault and what is wrong with it.

One wording for both halves: the service answers them as the `errors` of a 400
(API.md §3) and the provisioner reports them as diagnostics. A `prefix` places
a problem inside a larger request, so a batch says `items[17].agentProfileId`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError


@dataclass(frozen=True)
class Problem:
    parameter: str
    detail: str

    def __str__(self) -> str:
        return f"{self.parameter}: {self.detail}"

    def under(self, prefix: str) -> Problem:
        """The same problem inside `prefix` (`items[17]`): `items[17].version`."""
        if not prefix:
            return self
        joined = prefix if self.parameter == "body" else f"{prefix}.{self.parameter}"
        return Problem(joined, self.detail)


class RuleViolation(ValueError):
    """One or more problems; nothing was done."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


def parameter_of(loc: Sequence[Any]) -> str:
    """A pydantic error location as a parameter name: `tempFiles.0.id`."""
    return ".".join(str(part) for part in loc) or "body"


def choices_of(error: Mapping[str, Any]) -> list[str]:
    """The values a literal or enum error says are allowed."""
    expected = str((error.get("ctx") or {}).get("expected", ""))
    return re.findall(r"'([^']*)'", expected)


def describe(error: Mapping[str, Any], parameter: str) -> str:
    """What is wrong, in words that name the field and never echo more than the bad value."""
    kind = str(error.get("type", ""))
    if kind == "extra_forbidden":
        return f"unknown field '{parameter.rsplit('.', 1)[-1]}'"
    if kind == "json_invalid":
        return "the body is not valid JSON"
    if kind.startswith("uuid"):
        return f"'{error.get('input')}' is not a UUID"
    if kind == "missing" and parameter == "body":
        return "a JSON body is required"
    choices = choices_of(error) if kind in ("literal_error", "enum") else []
    if choices and isinstance(error.get("input"), str):
        bad = error["input"]
        close = difflib.get_close_matches(bad, choices, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"'{bad}' is not one of {', '.join(choices)}{hint}"
    return str(error.get("msg", "invalid value"))


def own_errors(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """pydantic's errors without those that only follow from others: a list "too short"
    because its own entries failed (`["EXECUTION_COMPLETD"]` is not an empty list to
    its writer: the entry says what is wrong)."""
    locs = [tuple(e.get("loc", ())) for e in errors]

    def follows(error: Mapping[str, Any]) -> bool:
        loc = tuple(error.get("loc", ()))
        inner = (o for o in locs if len(o) > len(loc) and o[: len(loc)] == loc)
        return error.get("type") == "too_short" and any(True for _ in inner)

    return [e for e in errors if not follows(e)]


def problems_of(error: Mapping[str, Any], loc: Sequence[Any]) -> list[Problem]:
    """One pydantic error (at `loc`, its location inside the value checked) as problems:
    a rule that found several (`rule_error(..., at=[(part, detail)])`) names each part."""
    found = (error.get("ctx") or {}).get(AT)
    if found:
        return [Problem(parameter_of([*loc, *part]), detail) for part, detail in found]
    parameter = "body" if error.get("type") == "json_invalid" else parameter_of(loc)
    return [Problem(parameter, describe(error, parameter))]


def problems_from(exc: ValidationError, prefix: str = "") -> list[Problem]:
    """Every error of a pydantic validation, as problems under `prefix`."""
    return [
        problem.under(prefix)
        for err in own_errors(exc.errors())
        for problem in problems_of(err, err.get("loc", ()))
    ]


def under(problems: Iterable[Problem], prefix: str) -> list[Problem]:
    return [p.under(prefix) for p in problems]


AT = "problems_at"
"""The context key of a rule error that found problems in several parts of a value."""


def rule_error(detail: str, at: Sequence[tuple[tuple[str, ...], str]] = ()) -> PydanticCustomError:
    """A rule's error inside pydantic. `at`: the problems it found, each at a part of
    the value checked (`(("X-A",), "...")` in a header map); the detail then says them
    all, for a reader of pydantic's own text."""
    # The detail goes through the context so braces in it are never a template.
    return PydanticCustomError("rule", "{detail}", {"detail": detail, AT: list(at)})
