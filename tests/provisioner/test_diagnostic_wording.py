"""The words of workspace diagnostics: a suggestion is worded by the one rule
(`rules.problems.did_you_mean`) wherever it is made, a value not among the choices
in the service's words (`rules.problems.describe`), and every location is named
once (webhook headers, batch items in the YAML or an itemsFile, template fields)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentform.config.loader import load_workspace
from agentform.errors import DiagnosticsError
from agentform.rules.problems import did_you_mean

from .harness import write_workspace


def problems(ws: Path, files: dict[str, str], environ: dict[str, str] | None = None) -> list[str]:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", **files})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ=environ or {})
    return [d.render() for d in info.value.diagnostics]


@pytest.mark.parametrize("value", ["presnt", "gone"])
def test_a_value_not_among_the_choices_is_said_in_the_shared_words(ws: Path, value: str) -> None:
    (problem,) = problems(ws, {"p.yaml": f"profilePools:\n  - {{name: p, ensure: {value}}}\n"})
    choices = ["present", "absent"]
    assert problem == (
        f"p.yaml:2:23: error: profilePools.0.ensure: '{value}' is not one of present, absent"
        + did_you_mean(value, choices)
    )
