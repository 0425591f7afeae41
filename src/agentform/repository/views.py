"""The views of `agentform affected`: lines for a terminal, JSON for programs, and
the matrix a GitHub Actions workflow's `strategy.matrix` takes with `fromJSON`
(`{"include": []}` when nothing is affected, which a workflow can test)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentform.repository.affected import Affected


def affected_text(found: list[Affected], base: str, why: bool) -> str:
    if not found:
        return f"No workspace x environment is affected by the changes since {base}.\n"
    lines = []
    for item in found:
        lines += [f"{item.pair}: {r}" for r in item.reasons] if why else [str(item.pair)]
    return "\n".join(lines) + "\n"


def affected_json(found: list[Affected], base: str) -> str:
    document = {"base": base, "affected": [item.as_json() for item in found]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def affected_matrix(found: list[Affected]) -> str:
    """One line of JSON (a workflow writes it to $GITHUB_OUTPUT as `name=value`): the
    pairs a job can test and plan, so not a deleted one (json and text name it)."""
    include = [item.pair.as_json() for item in found if not item.deleted]
    return json.dumps({"include": include}, ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class AffectedShown:
    """The affected pairs as each view of `agentform affected` shows them."""

    found: list[Affected]
    base: str  # as the user named it
    commit: str  # the commit it resolved to
    why: bool

    def text(self, _: object) -> str:
        return affected_text(self.found, self.base, self.why)

    def json(self, _: object) -> str:
        return affected_json(self.found, self.commit)

    def github_matrix(self, _: object) -> str:
        return affected_matrix(self.found)
