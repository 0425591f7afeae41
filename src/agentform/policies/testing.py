"""`agentform policy test`: the policies' own tests, as data (`policies/tests/*.yaml`).

A test gives one change (`change:`) or a small plan (`plan: {changes: [...]}`) as
YAML, in the form rules see them, and the verdicts it expects: the rules it
`violates` and those it `passes`. No service and no workspace are needed. A
sensitive value is written `(secret)` (it holds a secret()) or `(sensitive)`.

Coverage: each rule needs a test that violates it and one that it passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentform.core.problems import did_you_mean, own_errors
from agentform.core.yamlpos import Located, parse, problem_of
from agentform.engine.model import ACTIONS
from agentform.kinds.base import Kind
from agentform.kinds.model import Action
from agentform.policies.expressions import SECRET, SENSITIVE
from agentform.policies.judge import Subjects, verdicts_of
from agentform.policies.loading import PolicySet
from agentform.policies.names import kind_fields
from agentform.policies.sources import Source

MAX_TESTS = 1_000  # in one file
MAX_CHANGES = 10_000  # in one test's plan


class ChangeCase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    name: str
    action: Action
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    fields: list[str] | None = None  # default: the keys whose values differ
    reason: str = "a test"


class PlanCase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    changes: list[ChangeCase] = Field(max_length=MAX_CHANGES)


class PolicyTest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    workspace: str = "workspace"
    environment: str | None = None
    organization: str = "organization"
    change: ChangeCase | None = None
    plan: PlanCase | None = None
    violates: list[str] = Field(default_factory=list)
    passes: list[str] = Field(default_factory=list)


class TestFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tests: list[PolicyTest] = Field(max_length=MAX_TESTS)


@dataclass(frozen=True)
class CaseOutcome:
    file: str
    name: str
    outcome: Literal["passed", "failed", "error"]
    where: str  # file:line of the test
    message: str = ""
    violates: tuple[str, ...] = ()  # what it expected, for coverage
    passes: tuple[str, ...] = ()


def run_tests(policies: PolicySet, sources: list[Source]) -> list[CaseOutcome]:
    """Every test of every file, in order; a file that does not load is one error."""
    outcomes: list[CaseOutcome] = []
    for source in sources:
        loaded = _load(source)
        if isinstance(loaded, CaseOutcome):
            outcomes.append(loaded)
            continue
        doc, model = loaded
        for i, test in enumerate(model.tests):
            where = f"{source.name}:{doc.where(('tests', i), at_key=False)[0]}"
            outcomes.append(_run(policies, test, source.name, where))
    return outcomes


def _load(source: Source) -> tuple[Located, TestFile] | CaseOutcome:
    def error(message: str, line: int = 1) -> CaseOutcome:
        return CaseOutcome(source.name, "(the file)", "error", f"{source.name}:{line}", message)

    if source.problem is not None:
        return error(source.problem)
    try:
        doc = parse(source.text)
    except yaml.YAMLError as exc:
        message, at = problem_of(exc)
        return error(f"invalid YAML: {message}", at[0] if at else 1)
    try:
        return doc, TestFile.model_validate(doc.data)
    except ValidationError as exc:
        err = own_errors(exc.errors())[0]
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc)
        return error(f"{where}: {err['msg']}", doc.where(loc)[0])


def _run(policies: PolicySet, test: PolicyTest, file: str, where: str) -> CaseOutcome:
    def done(outcome: Literal["passed", "failed", "error"], message: str = "") -> CaseOutcome:
        return CaseOutcome(
            file, test.name, outcome, where, message, tuple(test.violates), tuple(test.passes)
        )

    known = policies.by_name
    unknown = [n for n in (*test.violates, *test.passes) if n not in known]
    if unknown:
        return done("error", f"no rule {unknown[0]}{did_you_mean(unknown[0], known)}")
    if (test.change is None) == (test.plan is None):
        return done("error", "a test gives either `change:` or `plan:`")
    cases = [test.change] if test.change is not None else test.plan.changes  # type: ignore[union-attr]
    wrong = next((said for case in cases if (said := _unknown_in(case))), None)
    if wrong:  # a rule reading the field it meant would be tested on nothing
        return done("error", wrong)
    datas = [_data(c) for c in cases]
    summary = {
        a: sum(d["action"] == a for d in datas) for a in (*ACTIONS, "unchanged", "unmanaged")
    }
    summary["update"] += sum(d["action"] == "rename" for d in datas)
    base = {
        "workspace": test.workspace,
        "environment": test.environment,
        "organization": {"id": test.organization, "name": test.organization},
        "plan": {"summary": summary},
    }
    verdicts = verdicts_of(policies, base, Subjects.given(datas))
    problems = []
    for name in test.violates:
        found = [v for v in verdicts.violations if v.rule == name]
        if not any(v.outcome == "violated" for v in found):
            why = found[0].message if found else _not_checked(verdicts, name)
            problems.append(f"expected {name} to be violated: {why}")
    for name in test.passes:
        found = [v for v in verdicts.violations if v.rule == name]
        if found:
            problems.append(f"expected {name} to pass: {found[0].message}")
        elif not _checked(verdicts, name):
            problems.append(f"expected {name} to pass: {_not_checked(verdicts, name)}")
    return done("failed", "\n".join(problems)) if problems else done("passed")


def _checked(verdicts: Any, name: str) -> int:
    return next((r.checked for r in verdicts.rules if r.name == name), 0)


def _not_checked(verdicts: Any, name: str) -> str:
    if _checked(verdicts, name):
        return "it was not"
    return "its match (kinds, actions, workspaces, environments) selects nothing in this test"


def _unknown_in(case: ChangeCase) -> str | None:
    """The first kind or field of `case` no kind has, said as rule files say theirs."""
    if case.kind not in Kind.registry:
        return f"change.kind: no kind {case.kind}{did_you_mean(case.kind, Kind.registry)}"
    fields = kind_fields([case.kind])
    for held, values in (("before", case.before), ("after", case.after)):
        for name in values or {}:
            if name not in fields:
                return (
                    f"change.{held}.{name}: {case.kind} has no field {name}"
                    f"{did_you_mean(name, fields)}"
                )
    return None


def _data(case: ChangeCase) -> dict[str, Any]:
    before, after = _values(case.before), _values(case.after)
    fields = case.fields
    if fields is None:
        b, a = before or {}, after or {}
        fields = sorted(k for k in b.keys() | a.keys() if b.get(k) != a.get(k) and k != "name")
    return {
        "kind": case.kind,
        "name": case.name,
        "address": f"{case.kind}/{case.name}",
        "action": case.action,
        "before": before,
        "after": after,
        "fields": fields,
        "reason": case.reason,
    }


def _values(value: Any) -> Any:
    """Test data as rules see it: `(secret)` and `(sensitive)` as the run's tokens."""
    if value == "(secret)":
        return SECRET
    if value == "(sensitive)":
        return SENSITIVE
    if isinstance(value, dict):
        return {str(k): _values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_values(v) for v in value]
    return value


def coverage(policies: PolicySet, outcomes: list[CaseOutcome]) -> list[str]:
    """The rules lacking a passing test that violates them or one that they pass."""
    lacking = []
    for rule in policies.rules:
        passed = [o for o in outcomes if o.outcome == "passed"]
        missing = [
            what
            for what, found in (
                ("a violating case", any(rule.name in o.violates for o in passed)),
                ("a passing case", any(rule.name in o.passes for o in passed)),
            )
            if not found
        ]
        if missing:
            lacking.append(f"{rule.name} ({rule.file}:{rule.line}) lacks {' and '.join(missing)}")
    return lacking
