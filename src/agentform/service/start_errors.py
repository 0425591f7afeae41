"""What keeps the service from starting: its database, its port, its job kinds.

Each is raised before anything is served and said to the user as it is (the
command line reports any `AgentformError` with its message, no traceback).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentform.core.errors import AgentformError


class CannotStart(AgentformError):
    """The service cannot start; the message says why."""


class MigrationError(CannotStart):
    """The database cannot be brought to this code's schema; the message says why."""


class PortInUse(CannotStart):
    """The address to serve on is taken (or not ours to take)."""


class UnhandledJobKind(CannotStart):
    """Jobs of a kind no handler is registered for (service/job_handlers.py)."""

    def __init__(self, kinds: Iterable[str]) -> None:
        self.kinds = sorted(kinds)
        named = ", ".join(repr(kind) for kind in self.kinds)
        super().__init__(f"no handler for job kind {named}: its jobs would never run")
