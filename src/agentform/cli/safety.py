"""What keeps a run's sensitive values in: its registry, its logs, its crash log.

Each command run has one `Secrets` registry (the workspace's secrets, the API
key, earlier values learned while planning). Every log record and the crash
log pass through it. A crash log is a new file per run that only its user can
read, under the workspace's `.agentform/` (never a fixed name in the shared
temporary directory, where another user could read it or plant a link).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from contextvars import ContextVar
from pathlib import Path

from agentform.core.secrets import Secrets

_run: ContextVar[Secrets | None] = ContextVar("agentform_run_secrets", default=None)


def run_secrets() -> Secrets:
    """The registry of the current run (a new one outside a command)."""
    current = _run.get()
    if current is None:
        current = Secrets()
        _run.set(current)
    return current


def start_run() -> Secrets:
    secrets = Secrets()
    _run.set(secrets)
    _scrub_logs()
    return secrets


class _ScrubbingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return run_secrets().scrub(super().format(record))


_handler: logging.Handler | None = None


def _scrub_logs() -> None:
    """Warnings and errors logged during the run (the in-process service's,
    httpx's) go to stderr scrubbed, instead of through logging's bare fallback."""
    global _handler
    root = logging.getLogger()
    if _handler is None or _handler not in root.handlers:
        _handler = logging.StreamHandler()
        _handler.setLevel(logging.WARNING)
        _handler.setFormatter(_ScrubbingFormatter("%(message)s"))
        root.addHandler(_handler)
    _handler.setStream(sys.stderr)  # type: ignore[attr-defined]


def write_crash_log(workspace_dir: Path | None, text: str) -> Path:
    """Writes `text`, scrubbed, to a new file only the user can read; its path."""
    text = run_secrets().scrub(text)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder: Path | None = None
    if workspace_dir is not None:
        folder = workspace_dir / ".agentform"
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            folder = None  # no workspace here: the system's temporary directory
    # mkstemp: a new name each run, created exclusively, readable by its user only
    import tempfile  # a crash is rare: every command's start-up does not pay for it

    fd, name = tempfile.mkstemp(
        prefix=f"crash-{stamp}-" if folder else f"agentform-crash-{stamp}-",
        suffix=".log",
        dir=folder,
    )
    with os.fdopen(fd, "w") as out:
        out.write(text)
    return Path(name)
