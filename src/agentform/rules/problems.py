"""Problems a rule finds: the parameter at fault and what is wrong with it.

One wording for both halves: the service answers them as the `errors` of a 400
(API.md §3) and the provisioner reports them as diagnostics. A `prefix` places
a problem inside a larger request, so a batch says `items[17].agentProfileId`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


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
    return str(error.get("msg", "invalid value"))


def problem_of(error: Mapping[str, Any], loc: Sequence[Any]) -> Problem:
    """One pydantic error (at `loc`, its location inside the value checked) as a problem."""
    parameter = "body" if error.get("type") == "json_invalid" else parameter_of(loc)
    return Problem(parameter, describe(error, parameter))


def problems_from(exc: ValidationError, prefix: str = "") -> list[Problem]:
    """Every error of a pydantic validation, as problems under `prefix`."""
    return [problem_of(err, err.get("loc", ())).under(prefix) for err in exc.errors()]


def under(problems: Iterable[Problem], prefix: str) -> list[Problem]:
    return [p.under(prefix) for p in problems]
