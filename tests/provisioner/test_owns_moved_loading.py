"""`owns` and `moved` as the files write them: the problems a hurried user meets,
each at its line, with a suggestion that names the key as it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentform.config.loader import load_workspace
from agentform.core.errors import DiagnosticsError
from tests.provisioner.harness import write_workspace


def problems(root: Path, text: str) -> str:
    write_workspace(root, {"agentform.yaml": "workspace: w\n" + text})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(root)
    return str(info.value)


def test_a_misspelt_from_suggests_from_as_written(ws: Path) -> None:
    said = problems(
        ws, "moved:\n  - {form: profilePools/a, to: profilePools/b}\nprofilePools: [{name: b}]\n"
    )
    assert "agentform.yaml:3:6: error: moved.0.form: unknown key (did you mean 'from'?)" in said


def test_owns_of_a_misspelt_kind_suggests_the_kind(ws: Path) -> None:
    said = problems(ws, 'owns:\n  profilePool: ["a-*"]\n')
    assert "did you mean 'profilePools'?" in said


def test_owns_globs_are_bounded(ws: Path) -> None:
    globs = ", ".join(f'"g{i}-*"' for i in range(101))
    said = problems(ws, f"owns:\n  profilePools: [{globs}]\n")
    assert "owns.profilePools" in said and "at most 100" in said


def test_a_non_ascii_name_matches_its_glob(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": 'workspace: w\nowns:\n  profilePools: ["équipe-*"]\n'
            "profilePools: [{name: équipe-eu}]\n"
        },
    )
    workspace = load_workspace(ws)
    assert workspace.settings.owns == {"profilePools": ["équipe-*"]}
