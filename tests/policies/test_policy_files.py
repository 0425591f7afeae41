"""Policy files with problems (load_errors.yaml): every problem reported together,
each at its file:line:column, with a "did you mean" where one helps; and the
bounds that hold for a hostile file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.policies.expressions import MAX_EXPRESSION_CHARS
from agentform.policies.loading import load_policies
from agentform.policies.sources import MAX_FILES, Source, working_tree

CASES = yaml.safe_load((Path(__file__).parent / "load_errors.yaml").read_text())["cases"]


def problems(text: str) -> list[str]:
    try:
        load_policies([Source("policies/rules.yaml", text)])
    except DiagnosticsError as exc:
        return [d.render() for d in exc.diagnostics]
    return []


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_problems_at_their_place(case: dict[str, Any]) -> None:
    assert problems(case["text"]) == case["errors"]


def rule(deny: str, message: str = "'m'") -> str:
    return yaml.safe_dump(
        {"rules": [{"name": "r", "level": "advisory", "deny": deny, "message": message}]}
    )


def test_a_valid_file_loads_with_its_rules_and_digest() -> None:
    text = rule("change.after.url.startsWith('http:')", "'webhook {{ change.name }}'")
    policies = load_policies([Source("policies/a.yaml", text)])
    assert [r.name for r in policies.rules] == ["r"]
    assert policies.rules[0].fields == ("url",)
    assert len(policies.files["policies/a.yaml"]) == 64


def test_an_expression_too_long_or_too_deep_is_refused_at_load() -> None:
    long = " || ".join(["change.name == 'x'"] * (MAX_EXPRESSION_CHARS // 10))
    assert "longer than 4,000 characters" in problems(rule(long))[0]
    deep = "(" * 200 + "true" + ")" * 200
    assert "recursion limit" in problems(rule(deep))[0]


def test_the_files_are_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    folder.mkdir()
    for i in range(MAX_FILES + 1):
        (folder / f"p{i}.yaml").write_text("rules: []\n")
    with pytest.raises(AgentformError, match="over the 200 read"):
        working_tree(tmp_path)


def test_a_link_leaving_the_root_is_not_read_and_the_other_files_problems_are_said_too(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(rule("true"))
    folder = tmp_path / "ws" / "policies"
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text(rule("change.actoin == 'x'"))
    (folder / "x.yaml").symlink_to(outside)
    (folder / "y.yaml").write_bytes(b"\xff\xfe rules")
    with pytest.raises(DiagnosticsError) as info:
        load_policies(working_tree(tmp_path / "ws"))
    said = [d.render() for d in info.value.diagnostics]
    assert len(said) == 3, said
    assert said[0].startswith("policies/a.yaml:2:16: error: deny: change has no field actoin"), said
    assert said[1].startswith("policies/x.yaml: error: ") and "outside" in said[1], said
    assert said[2] == "policies/y.yaml: error: not UTF-8 text: not a policy file", said


@pytest.mark.parametrize("target", ["../missing/shared.yaml", "gone.yaml", "/nonexistent"])
def test_a_link_leading_nowhere_is_a_problem_at_its_file_with_the_others(
    tmp_path: Path, target: str
) -> None:
    """A shared policy linked from a submodule CI did not check out: its rules
    would silently not run, so the link is said, as an unreadable file is."""
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "a.yaml").write_text(rule("change.actoin == 'x'"))
    (folder / "shared.yaml").symlink_to(target)
    with pytest.raises(DiagnosticsError) as info:
        load_policies(working_tree(tmp_path))
    said = [d.render() for d in info.value.diagnostics]
    assert len(said) == 2, said
    assert said[1] == "policies/shared.yaml: error: a link to a file that does not exist", said


def test_a_policy_file_in_a_link_loop_is_said_as_a_loop(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "a.yaml").write_text(rule("change.actoin == 'x'"))
    (folder / "l1.yaml").symlink_to("l2.yaml")
    (folder / "l2.yaml").symlink_to("l1.yaml")
    with pytest.raises(DiagnosticsError) as info:
        load_policies(working_tree(tmp_path))
    said = [d.render() for d in info.value.diagnostics]
    assert said[1:] == [
        f"policies/{name}: error: a link loop (the link leads back to itself)"
        for name in ("l1.yaml", "l2.yaml")
    ], said


def test_a_billion_laughs_file_is_a_yaml_error() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        bomb += f"{cur}: &{cur} [{', '.join([f'*{prev}'] * 10)}]\n"
    found = problems(bomb)
    assert len(found) == 1 and "invalid YAML" in found[0]


def test_a_file_that_is_not_text_is_said_so(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "x.yaml").write_bytes(b"\xff\xfe rules")
    with pytest.raises(DiagnosticsError, match=r"policies/x\.yaml: error: not UTF-8 text"):
        load_policies(working_tree(tmp_path))


def test_comprehension_variables_of_no_known_shape_and_shadowing_load() -> None:
    """A variable over a list whose items have no known fields is not checked; one
    named as a value a rule sees (`change`) is the comprehension's own."""
    plan_rule = yaml.safe_dump(
        {
            "rules": [
                {
                    "name": "r",
                    "level": "advisory",
                    "scope": "plan",
                    "deny": "plan.changes.all(change, change.kind == 'x' && "
                    "change.after.members.all(m, m.anything == 1))",
                    "message": "'m'",
                }
            ]
        }
    )
    assert problems(plan_rule) == []
    assert problems(rule("change.after.members.exists(m, m.whatever)")) == []
