"""Problems a rule finds: the parameter at fault and what is wrong with it.

One wording for both halves: the service answers them as the `errors` of a 400
(docs/service/contract.md#errors) and the provisioner reports them as diagnostics. A
`prefix` places a problem inside a larger request, so a batch says `items[17].agentProfileId`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from agentform.core.errors import AgentformError


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


class RuleViolation(AgentformError, ValueError):
    """One or more problems; nothing was done."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


def parameter_of(loc: Sequence[Any]) -> str:
    """A pydantic error location as a parameter name: `tempFiles.0.id`."""
    return ".".join(str(part) for part in loc) or "body"


def choices_of(error: Mapping[str, Any]) -> list[str]:
    """The values a literal or enum error says are allowed; an empty one (a filter's
    "any", as the form's blank choice) is not listed as a value to write."""
    expected = str((error.get("ctx") or {}).get("expected", ""))
    return [choice for choice in re.findall(r"'([^']*)'", expected) if choice]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (`X`, `X | None`, `list[X]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def fields_beside(model: Any, loc: Sequence[Any]) -> list[str]:
    """The field names known where `loc` (an unknown field's location) points, inside
    `model` (a model, or an annotation holding one); [] when that is not known."""
    current = _model_in(model)
    for part in loc[:-1]:
        if current is None:
            return []
        if isinstance(part, int):
            continue  # an item of a list: the same model
        field = current.model_fields.get(str(part))
        current = _model_in(field.annotation) if field is not None else None
    return list(current.model_fields) if current is not None else []


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'X'?)` when a choice is close to `word`, else '': the one
    wording of a suggestion, in the service's messages and the provisioner's."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean '{close[0]}'?)" if close else ""


def describe(error: Mapping[str, Any], parameter: str, known: Sequence[str] = ()) -> str:
    """What is wrong, in words that name the field and never echo more than the bad value.
    `known`: the field names beside the field at fault (for a "did you mean")."""
    kind = str(error.get("type", ""))
    if kind == "extra_forbidden":  # the parameter names the field: the detail does not again
        name = parameter.rsplit(".", 1)[-1]
        return "unknown field" + did_you_mean(name, known)
    if kind == "json_invalid":
        return "the body is not valid JSON"
    if kind.startswith("uuid"):
        return f"'{error.get('input')}' is not a UUID"
    if kind == "missing" and parameter == "body":
        return "a JSON body is required"
    if kind == "too_long" and isinstance(most := (error.get("ctx") or {}).get("max_length"), int):
        return _too_many(parameter, most, (error.get("ctx") or {}).get("actual_length"))
    choices = choices_of(error) if kind in ("literal_error", "enum") else []
    if choices and isinstance(error.get("input"), str):
        bad = error["input"]
        return f"'{bad}' is not one of {', '.join(choices)}{did_you_mean(bad, choices)}"
    return str(error.get("msg", "invalid value"))


def _too_many(parameter: str, most: int, found: object) -> str:
    """A list over its bound, named by its field (`at most 500 steps, not 501`)."""
    name = parameter.rsplit(".", 1)[-1]
    items = name if name.isidentifier() and parameter != "body" else "items"
    return f"at most {most:,} {items}" + (f", not {found:,}" if isinstance(found, int) else "")


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


def problems_of(error: Mapping[str, Any], loc: Sequence[Any], model: Any = None) -> list[Problem]:
    """One pydantic error (at `loc`, its location inside the value checked, a `model`
    when known) as problems: a rule that found several (`rule_error(..., at=[(part,
    detail)])`) names each part."""
    found = (error.get("ctx") or {}).get(AT)
    if found:
        return [Problem(parameter_of([*loc, *part]), detail) for part, detail in found]
    parameter = "body" if error.get("type") == "json_invalid" else parameter_of(loc)
    known = fields_beside(model, loc) if error.get("type") == "extra_forbidden" else []
    return [Problem(parameter, describe(error, parameter, known))]


def problems_from(exc: ValidationError, prefix: str = "", model: Any = None) -> list[Problem]:
    """Every error of a pydantic validation (of `model`, when given: unknown fields then
    get a "did you mean"), as problems under `prefix`."""
    return [
        problem.under(prefix)
        for err in own_errors(exc.errors())
        for problem in problems_of(err, err.get("loc", ()), model)
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
