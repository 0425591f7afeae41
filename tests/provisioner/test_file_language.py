"""The file language at scale (issue 18): `x-` keys for anchors, a merge key that
an explicit key overrides, and booleans that are YAML 1.2's only."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel, Strict

from agentform.config.document import _models_in, document_model
from agentform.core.errors import DiagnosticsError
from agentform.core.yamlpos import parse
from tests.provisioner.harness import load, write_workspace

ANCHORED = """\
x-pool: &pool
  selectionStrategy: most_recently_used
  allowConcurrentUse: false
profilePools:
  - <<: *pool
    name: eu
    allowConcurrentUse: true
  - name: us
    <<: *pool
"""


def test_x_keys_hold_anchors_and_written_keys_override_merged_ones(ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": "workspace: w\nx-note: free text\n", "p.yaml": ANCHORED})
    pools = {p.model.name: p.model for p in load(ws).declared["profilePools"]}  # type: ignore[attr-defined]
    eu, us = pools["eu"].model_dump(), pools["us"].model_dump()
    assert eu["allowConcurrentUse"] is True  # written after the merge: it wins
    assert eu["selectionStrategy"] == "most_recently_used"
    assert us["allowConcurrentUse"] is False


def test_a_key_written_twice_is_still_a_duplicate_beside_a_merge(ws: Path) -> None:
    text = "x-b: &b {name: a}\nprofilePools:\n  - <<: *b\n    name: c\n    name: d\n"
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "p.yaml": text})
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        "p.yaml:5:5: error: duplicate key 'name'"
    ]


def test_a_merged_mapping_reached_twice_is_read_the_same_both_times() -> None:
    doc = parse("b: &b {<<: {k: 1}, k: 2}\nc: *b\nd: {<<: *b, k: 3}\n")
    assert doc.data == {"b": {"k": 2}, "c": {"k": 2}, "d": {"k": 3}}
    assert doc.duplicates == []


def test_only_top_level_x_keys_are_ignored(ws: Path) -> None:
    text = "profilePools:\n  - name: a\n    x-note: nested keys are checked\n"
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "p.yaml": text})
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    assert "p.yaml:3:5: error: profilePools.0.x-note: unknown key" in str(info.value)


def test_yes_no_on_off_are_words_not_booleans() -> None:
    assert parse("a: [yes, no, on, off, y, NO, true, False, TRUE]\n").data == {
        "a": ["yes", "no", "on", "off", "y", "NO", True, False, True]
    }


@pytest.mark.parametrize(
    ("written", "shown"), [("no", "'no'"), ('"off"', "'off'"), ("0", "0"), ('"true"', "'true'")]
)
def test_a_boolean_field_takes_true_or_false_only(ws: Path, written: str, shown: str) -> None:
    text = f"profilePools:\n  - name: a\n    allowConcurrentUse: {written}\n"
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", "p.yaml": text})
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        f"p.yaml:3:25: error: profilePools.0.allowConcurrentUse: {shown} is not a boolean: "
        "write true or false"
    ]


def test_every_boolean_field_is_strict(ws: Path) -> None:
    files = {
        "agentform.yaml": "workspace: w\n",
        "t.yaml": "vaultTemplates:\n  - name: t\n    kind: login\n"
        "    fields: [{type: text, label: A, required: yes}]\n",
        "h.yaml": "webhooks:\n  - name: h\n    url: https://example.com/h\n"
        "    attachments:\n"
        "      - {agent: a, eventRules: [EXECUTION_COMPLETED], unwrapResult: 1}\n",
    }
    write_workspace(ws, files)
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    text = str(info.value)
    assert "required: 'yes' is not a boolean: write true or false" in text
    assert "unwrapResult: 1 is not a boolean: write true or false" in text


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> None:
    if model in seen:
        return
    seen.add(model)
    for info in model.model_fields.values():
        for inner in _models_in(info.annotation):
            _models(inner, seen)


def test_no_boolean_field_of_the_format_takes_lax_values() -> None:
    """A boolean field added later is strict too: pydantic's lax bool takes `"no"`,
    `"off"` and 0 for false, silently."""
    seen: set[type[BaseModel]] = set()
    _models(document_model(), seen)
    lax = []
    for model in seen:
        for name, info in model.model_fields.items():
            bools = [a for a in (info.annotation, *get_args(info.annotation)) if a is bool]
            strict = model.model_config.get("strict") or any(
                isinstance(m, Strict) and m.strict for m in info.metadata
            )
            if bools and not strict:
                lax.append(f"{model.__name__}.{name}")
    assert seen and lax == []
