"""The one rule that guards the user's files: an output the user names (a saved plan,
a cassette, a test report) replaces only an earlier one agentform wrote, never
another file. `plan --out pools.yaml` would turn a workspace file into a plan,
which the next apply then reads as pools removed; `test --junit-xml tests/a.yaml`
would replace a test.
"""

from __future__ import annotations

from pathlib import Path

from agentform.config.files import is_artifact
from agentform.core.errors import AgentformError


def refuse_overwriting(path: Path, what: str) -> None:
    """AgentformError, said before the run does anything, when `path` is a file
    agentform did not write. (What it writes, it recognises: the workspace's loader
    skips such a file, so a plan saved as `plan.yaml` is never read as objects.)"""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return  # writing it says what is wrong
    if not is_artifact(head):
        raise AgentformError(
            f"{path} exists and agentform did not write it: {what} does not replace it "
            "(name a new file)"
        )


def save_file(path: Path, text: str, what: str) -> None:
    """Writes an output the user named (`plan --out`), making its directory as
    --record-cassette does; a path that cannot be written is an error, not a crash,
    and a file agentform did not write is never replaced."""
    refuse_overwriting(path, what)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AgentformError(f"cannot write {what} to {path}: {exc.strerror}") from None
