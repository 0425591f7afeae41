"""What the workflow scripts share: running agentform on the workspace, and writing
to the job's summary and outputs (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT).

Environment: AGENTFORM_WORKSPACE (the workspace directory, default `workspace`),
AGENTFORM_OUT (where plans and reports are written, default `agentform-out`),
AGENTFORM (the command, default `agentform`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

WORKSPACE = os.environ.get("AGENTFORM_WORKSPACE", "workspace")
OUT = Path(os.environ.get("AGENTFORM_OUT", "agentform-out"))


def agentform(*args: str) -> subprocess.CompletedProcess[str]:
    """Runs agentform on the workspace; stdout is captured, stderr goes to the log."""
    command = [*shlex.split(os.environ.get("AGENTFORM", "agentform")), "-C", WORKSPACE, *args]
    print("$ " + " ".join(shlex.quote(c) for c in command), file=sys.stderr, flush=True)
    return subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)


def write_out(name: str, text: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    path.write_text(text)
    return path


def summary(markdown: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path and markdown:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown + "\n")


def output(name: str, value: str) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{name}={value}\n")


def workspace_of(marker: str) -> str:
    """NAME from `<!-- agentform:drift workspace=NAME -->`."""
    return unquote(marker.split("workspace=", 1)[-1].removesuffix("-->").strip())
