"""Rules over a plan: the verdicts, and what apply refuses because of them.

Each change's values are converted once and every rule that matches its kind and
action is evaluated on them; a whole-plan rule is evaluated once, on the changes it
matches. A rule that cannot be evaluated on a change (a missing field, the
iteration budget) gives an `error` outcome: shown, and refusing as a violation of
its level would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agentform.core.errors import AgentformError
from agentform.core.gcpause import collector_paused
from agentform.core.problems import did_you_mean
from agentform.engine.model import Plan
from agentform.engine.verdicts import Override, RuleVerdict, Verdicts, Violation
from agentform.policies.expressions import activation, combined
from agentform.policies.loading import PolicySet
from agentform.policies.rules import Rule
from agentform.policies.values import Place, change_data, plan_values

Data = dict[str, Any]


class Subjects:
    """The changes rules judge: each as rules see it (values.py), made on demand with
    only the fields its rules read, or given whole (policy tests)."""

    def __init__(
        self, pairs: list[tuple[str, str]], make: Callable[[int, frozenset[str] | None], Data]
    ) -> None:
        self.pairs = pairs  # (kind, action) of each change
        self.make = make
        self._whole: dict[int, Data] = {}

    @classmethod
    def of_plan(cls, plan: Plan, secrets: dict[str, set[Place]] | None) -> Subjects:
        changes = plan.changes
        return cls(
            [(c.kind, c.action) for c in changes],
            lambda i, reads: change_data(changes[i], secrets, reads),
        )

    @classmethod
    def given(cls, datas: list[Data]) -> Subjects:
        return cls([(d["kind"], d["action"]) for d in datas], lambda i, _: datas[i])

    def whole(self, i: int) -> Data:
        if i not in self._whole:
            self._whole[i] = self.make(i, None)
        return self._whole[i]


def judge(
    plan: Plan, policies: PolicySet, secrets: dict[str, set[Place]] | None = None
) -> Verdicts:
    """The verdicts of `policies` on `plan`; `secrets`: the workspace's secret_paths()
    (without them, no value passes for a secret())."""
    with collector_paused():  # a plan's many frozen values hold no cycles to find
        return verdicts_of(policies, plan_values(plan), Subjects.of_plan(plan, secrets))


def verdicts_of(policies: PolicySet, base: Data, subjects: Subjects) -> Verdicts:
    """The verdicts of `policies` on the changes `subjects` of a plan whose other
    values are `base`."""
    rules = [r for r in policies.rules if r.matches_place(base["workspace"], base["environment"])]
    checked = {r.name: 0 for r in policies.rules}
    violations: list[Violation] = []
    by_change = [r for r in rules if r.scope == "change"]
    chosen: dict[tuple[str, str], tuple[list[Rule], frozenset[str] | None, Any]] = {}
    for i, pair in enumerate(subjects.pairs):
        if pair not in chosen:
            mine = [r for r in by_change if r.matches_change(*pair)]
            chosen[pair] = (mine, _reads(mine), combined(tuple(r.deny for r in mine)))
        group, reads, together = chosen[pair]
        if not group:
            continue
        data = subjects.make(i, reads)
        values = activation({**base, "change": data})
        for rule, denied in _denials(group, together, values):
            checked[rule.name] += 1
            if (found := _verdict(rule, values, data, denied)) is not None:
                violations.append(found)
    for rule in (r for r in rules if r.scope == "plan"):
        pairs = enumerate(subjects.pairs)
        changes = [subjects.whole(i) for i, p in pairs if rule.matches_change(*p)]
        plan_data = {**base["plan"], "changes": changes}
        checked[rule.name] += 1
        if (found := _verdict(rule, activation({**base, "plan": plan_data}), None)) is not None:
            violations.append(found)
    violated = Counter(v.rule for v in violations)
    return Verdicts(
        rules=tuple(_rule_verdict(r, checked[r.name], violated[r.name]) for r in policies.rules),
        violations=tuple(violations),
        files=policies.files,
    )


def _reads(rules: list[Rule]) -> frozenset[str] | None:
    """The object fields any of `rules` reads; None when one reads whole objects."""
    found: frozenset[str] = frozenset()
    for rule in rules:
        if rule.reads is None:
            return None
        found |= rule.reads
    return found


def _denials(rules: list[Rule], together: Any, values: Any) -> Iterator[tuple[Rule, bool | None]]:
    """Each rule with its `deny` on `values`: all of them in one evaluation when they
    all evaluate (a runtime call costs more than most rules); None for a rule when
    that one evaluation failed, to be evaluated alone (each then has its own budget)."""
    results, error = together.evaluate(values) if together else (None, "")
    if error is None and isinstance(results, list) and all(isinstance(x, bool) for x in results):
        yield from zip(rules, results, strict=True)
    else:
        yield from ((rule, None) for rule in rules)


def _rule_verdict(rule: Rule, checked: int, violated: int) -> RuleVerdict:
    return RuleVerdict(
        name=rule.name,
        level=rule.level,
        file=rule.file,
        line=rule.line,
        checked=checked,
        violated=violated,
    )


def _verdict(
    rule: Rule, values: Any, change: dict[str, Any] | None, known: bool | None = None
) -> Violation | None:
    """The violation of `rule` on `values` (whose `deny` may be `known`), or None."""
    if known is False:
        return None
    denied, error = (True, None) if known else rule.deny.evaluate(values)
    if error is None and not isinstance(denied, bool):
        error = f"deny gave {type(denied).__name__}, not true or false"
    if error is None and not denied:
        return None
    if error is None:
        message, error = rule.message.render(values)
    else:
        message = ""
    if error is not None:
        message = f"the rule could not be evaluated: {error}"
    return Violation(
        rule=rule.name,
        level=rule.level,
        outcome="violated" if error is None else "error",
        address=change["address"] if change else None,
        path=_path(rule, change),
        message=message,
    )


def _path(rule: Rule, change: dict[str, Any] | None) -> str | None:
    if change is None or not rule.fields:
        return None
    changed = set(change["fields"])
    return next((f for f in rule.fields if f in changed), rule.fields[0])


def overridden(verdicts: Verdicts, overrides: Mapping[str, str]) -> tuple[Override, ...]:
    """The overrides apply records; refuses (AgentformError, before any write) a
    blocking violation, a mandatory one not overridden, and an override naming a
    rule that is unknown or blocking. Each violation is named by rule and address."""
    levels = {r.name: r.level for r in verdicts.rules}
    problems = []
    for name in overrides:
        if name not in levels:
            problems.append(f"--override-policy {name}: no such rule{did_you_mean(name, levels)}")
        elif levels[name] == "blocking":
            problems.append(f"--override-policy {name}: a blocking rule cannot be overridden")
    refused = [
        v
        for v in verdicts.violations
        if v.level == "blocking" or (v.level == "mandatory" and v.rule not in overrides)
    ]
    problems += [_refusal(v) for v in refused]
    if problems:
        raise AgentformError(
            "the policies refuse this apply; nothing was written:\n  " + "\n  ".join(problems)
        )
    return tuple(
        Override(rule=name, reason=reason, violations=used)
        for name, reason in overrides.items()
        if (used := tuple(v for v in verdicts.violations if v.rule == name))
    )


def _refusal(v: Violation) -> str:
    where = v.address or "the plan"
    how = "" if v.level == "blocking" else f" (override: --override-policy {v.rule} --reason …)"
    return f"{v.level} rule {v.rule} at {where}: {v.message}{how}"
