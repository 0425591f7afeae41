"""The base branch judges: a plan judged by the policies of a git ref, and what the
working tree's policies (a pull request's) would change, so a pull request that
weakens a rule is still judged by the rule, and the reviewer sees the weakening.

The rules' machinery (the CEL runtime, RE2, the rule format) is imported only when
there are policy files: a workspace without them pays nothing for it, in `validate`
as in `plan` (tests/test_cli_startup.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentform.policies.sources import Source, at_ref, working_tree

if TYPE_CHECKING:
    from agentform.config.loader import Workspace
    from agentform.engine.model import Plan
    from agentform.engine.verdicts import RuleChanges, Verdicts, Violation
    from agentform.policies.loading import PolicySet
    from agentform.policies.values import Place


def _load(sources: list[Source]) -> PolicySet | None:
    if not sources:
        return None
    from agentform.policies.loading import load_policies

    return load_policies(sources)


@dataclass(frozen=True)
class Judging:
    """The policies that judge a plan, loaded (and checked) before it is made."""

    proposed: PolicySet | None  # the working tree's
    ref: str | None = None  # with `judging`, the git ref's (the base branch's)
    judging: PolicySet | None = None

    def judged(self, plan: Plan, workspace: Workspace | None = None) -> Plan:
        """`plan` (of `workspace`) with the verdicts; unchanged when there are no
        policies."""
        if self.ref is None and self.proposed is None:
            return plan
        from agentform.policies.judge import judge
        from agentform.policies.loading import PolicySet
        from agentform.policies.values import secret_paths

        secrets = secret_paths(workspace) if workspace is not None else None
        empty = PolicySet((), {})
        judging, proposed = self.judging or empty, self.proposed or empty
        if self.ref is None:
            return plan.but(policies=judge(plan, proposed, secrets))
        verdicts = judge(plan, judging, secrets)
        changes = rule_changes(self.ref, (judging, proposed), plan, verdicts, secrets)
        return plan.but(policies=verdicts.but(ruleChanges=changes))


def judging(root: Path, ref: str | None = None) -> Judging:
    """The policies under `root` (and those of the commit `ref`, which then judge);
    a DiagnosticsError when a file has a problem."""
    proposed = _load(working_tree(root))
    if ref is None:
        return Judging(proposed)
    return Judging(proposed, ref, _load(at_ref(root, ref)))


def rule_changes(
    ref: str,
    sets: tuple[PolicySet, PolicySet],
    plan: Plan,
    verdicts: Verdicts,
    secrets: dict[str, set[Place]] | None = None,
) -> RuleChanges:
    """The rules the proposed set adds, removes and changes from the judging one
    (`sets`), and the violations of `plan` that would appear or go under it."""
    from agentform.engine.verdicts import RuleChanges
    from agentform.policies.judge import judge

    judging, proposed = sets
    old, new = judging.by_name, proposed.by_name
    changed = sorted(n for n in old.keys() & new.keys() if old[n].source != new[n].source)
    under_new = judge(plan, proposed, secrets).violations
    return RuleChanges(
        judgedBy=ref,
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(changed),
        wouldViolate=_missing_from(under_new, verdicts.violations),
        wouldPass=_missing_from(verdicts.violations, under_new),
    )


def _missing_from(
    these: tuple[Violation, ...], others: tuple[Violation, ...]
) -> tuple[Violation, ...]:
    keys = {(v.rule, v.address, v.level, v.outcome) for v in others}
    return tuple(v for v in these if (v.rule, v.address, v.level, v.outcome) not in keys)
