"""`agentform affected` over a repository's history (affected_history.yaml): each
step changes the working tree, and the pairs affected since HEAD, each with the
first word of each reason, are exactly those the data expects."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from agentform.cli.main import cli
from tests.repository.layout import company, write

HISTORY = yaml.safe_load((Path(__file__).parent / "affected_history.yaml").read_text())


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def affected(root: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["-C", str(root), "affected", "--base", "HEAD", "--format", "json", *args]
    )
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def shown(found: dict[str, Any]) -> dict[str, list[str]]:
    """Each pair as `workspace environment`, with the first words of its reasons."""
    return {
        f"{a['workspace']} {a['environment']}": [r.split(":", 1)[0] for r in a["reasons"]]
        for a in found["affected"]
    }


@pytest.mark.slow
def test_each_commit_affects_exactly_the_pairs_the_history_expects(tmp_path: Path) -> None:
    root = company(tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the company's repository")
    misses = []
    for step in HISTORY:
        write(root, step.get("write", {}))
        for gone in step.get("delete", []):
            shutil.rmtree(root / gone)
        found = shown(affected(root))
        if found != step["expect"]:
            misses.append(f"{step['name']}: {found} != {step['expect']}")
        git(root, "add", "-A")
        git(root, "commit", "-qm", step["name"])
    assert not misses, "\n".join(misses)
