"""A policy file's format (`rules:`, a list) and a rule once compiled.

A rule says which changes it looks at (`match`), when one breaks it (`deny`, a CEL
expression true on a violation) and what to say (`message`: a CEL expression, or
text with `{{ expr }}` parts over the same values). `scope: plan` makes a rule of
the whole plan: it sees `plan.changes` (those its `match` selects) and
`plan.summary`, and gives at most one verdict per plan.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agentform.core.problems import rule_error
from agentform.engine.verdicts import Level
from agentform.kinds.model import Action
from agentform.policies.expressions import Expression, masked_tokens

RULE_NAME = r"^[a-z0-9][a-z0-9-]{0,99}$"
MAX_RULES = 1_000  # in one file
MAX_MESSAGE_CHARS = 2_000  # a message as shown: longer ones are cut
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Match(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kinds: list[str] = Field(default_factory=list, max_length=100)
    actions: list[Action] = Field(default_factory=list)
    workspaces: list[str] = Field(default_factory=list, max_length=100)
    environments: list[str] = Field(default_factory=list, max_length=100)


def _rule_name(name: str) -> str:
    if not re.match(RULE_NAME, name):
        raise rule_error(
            f"{name!r} is not a rule's name: lowercase letters, digits and dashes, "
            "at most 100, starting with a letter or digit"
        )
    return name


class RuleModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, AfterValidator(_rule_name)]
    description: str = Field("", max_length=2_000)
    level: Level
    scope: Literal["change", "plan"] = "change"
    match: Match = Field(default_factory=Match)
    deny: str = Field(min_length=1)
    message: str = Field(min_length=1)


class PolicyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rules: list[Any] = Field(max_length=MAX_RULES)  # each a RuleModel, checked apart


@dataclass(frozen=True)
class Message:
    """A CEL expression, or text whose `{{ expr }}` parts are CEL expressions."""

    parts: tuple[str | Expression, ...]

    def render(self, data: dict[str, Any]) -> tuple[str, str | None]:
        """(the text, None), or (what there is, why a part could not be evaluated).
        The tokens standing for sensitive values are shown as the mask."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value, error = part.evaluate(data)
            if error is not None:
                return "".join(out), error
            out.append(value if isinstance(value, str) else _shown(value))
        text = masked_tokens(_CONTROL.sub(" ", "".join(out)))
        return text[:MAX_MESSAGE_CHARS], None


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def template_parts(text: str) -> list[tuple[str, int] | str]:
    """The text's literal parts, and its `{{ }}` parts with their offsets; the whole
    text (offset 0) when it has none."""
    if "{{" not in text:
        return [(text, 0)]
    parts: list[tuple[str, int] | str] = []
    at = 0
    for found in _TEMPLATE.finditer(text):
        parts.append(text[at : found.start()])
        parts.append((found[1], found.start(1)))
        at = found.end()
    parts.append(text[at:])
    return [p for p in parts if p != ""]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    level: Level
    scope: str
    match: Match
    deny: Expression
    message: Message
    file: str
    line: int
    column: int = 1
    fields: tuple[str, ...] = ()  # the object fields `deny` reads, in order
    reads: frozenset[str] | None = None  # those deny and message read (None: all)
    source: dict[str, Any] = field(default_factory=dict, compare=False)  # as written

    def matches_place(self, workspace: str, environment: str | None) -> bool:
        m = self.match
        if m.workspaces and not any(fnmatch.fnmatchcase(workspace, g) for g in m.workspaces):
            return False
        if not m.environments:
            return True
        return environment is not None and any(
            fnmatch.fnmatchcase(environment, g) for g in m.environments
        )

    def matches_change(self, kind: str, action: str) -> bool:
        m = self.match
        return (not m.kinds or kind in m.kinds) and (not m.actions or action in m.actions)
