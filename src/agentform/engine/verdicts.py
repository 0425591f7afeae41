"""The policies' verdicts on a plan: part of the Plan value, so every view shows them
and a saved plan records them (with the digests of the policy files that gave them).

The policies themselves (their files, CEL, the evaluation) are `agentform.policies`;
this module only holds what a plan says about them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator

from agentform.core.frozen import freeze
from agentform.kinds.model import Frozen

Level = Literal["advisory", "mandatory", "blocking"]
LEVELS: tuple[Level, ...] = ("advisory", "mandatory", "blocking")
Outcome = Literal["violated", "error"]


class RuleVerdict(Frozen):
    """One rule over the plan: how many changes (or plans) it checked, how many broke it."""

    name: str
    level: Level
    file: str  # where it is written, relative to the policies' root
    line: int
    checked: int = 0
    violated: int = 0


class Violation(Frozen):
    """A change (or, with `address` None, the plan) that breaks a rule, or on which
    the rule could not be evaluated (`outcome` "error": a mandatory or blocking rule
    then refuses as a violation would)."""

    rule: str
    level: Level
    outcome: Outcome
    address: str | None = None  # "KIND/KEY"; None for a whole-plan rule
    path: str | None = None  # the field the rule reads, when it names one
    message: str


class RuleChanges(Frozen):
    """How the rules of the working tree differ from those that judged the plan
    (`plan --policies-from REF`), and what their verdicts would be."""

    judgedBy: str  # the git ref whose policies judged the plan
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    wouldViolate: tuple[Violation, ...] = ()  # under the working tree's rules only
    wouldPass: tuple[Violation, ...] = ()  # under the judging rules only


class Verdicts(Frozen):
    rules: tuple[RuleVerdict, ...] = ()
    violations: tuple[Violation, ...] = ()
    files: Annotated[dict[str, str], AfterValidator(freeze)] = {}  # file -> sha256
    ruleChanges: RuleChanges | None = None

    def at(self, level: Level) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.level == level)


class Override(Frozen):
    """A mandatory rule that `apply --override-policy NAME --reason TEXT` let pass,
    with what it let through: recorded in the apply report."""

    rule: str
    reason: str
    violations: tuple[Violation, ...] = ()
