"""`make demo`'s script, run as a user runs it with its output sent to a file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_ends_with_no_changes_and_writes_plain_text_to_a_file(tmp_path: Path) -> None:
    demo = tmp_path / "quickstart"
    shutil.copytree(
        ROOT / "examples" / "quickstart", demo, ignore=shutil.ignore_patterns(".agentform")
    )
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        done = subprocess.run(
            ["bash", str(demo / "demo.sh")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "AGENTFORM": str(Path(sys.executable).with_name("agentform"))},
            timeout=300,
        )
    text = log.read_text(encoding="utf-8")
    assert done.returncode == 0, text
    assert "\x1b" not in text  # no terminal escapes in a file
    assert text.rstrip().splitlines()[-1].startswith("No changes.")
    assert "$ agentform apply --auto-approve" in text
