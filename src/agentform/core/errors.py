"""The one exception tree of agentform; each boundary (CLI, apply) translates it.

Only `api/` turns httpx failures into `ApiError`; the CLI maps every class
here to a message and an exit code.
"""

from __future__ import annotations

from agentform.core.diagnostic_types import Diagnostic


class AgentformError(Exception):
    """Base of every error agentform reports to a user."""


class DiagnosticsError(AgentformError):
    """One or more problems with the workspace, all reported together; `outcome`
    says what they left undone, after their count."""

    def __init__(self, diagnostics: list[Diagnostic], outcome: str = "nothing was changed") -> None:
        self.diagnostics = diagnostics
        self.outcome = outcome
        super().__init__("\n".join(d.render() for d in diagnostics))


class InvalidWorkspace(DiagnosticsError):
    """A workspace's problems, with the settings its root file gave when it gave them
    valid: checks across workspaces (ownership overlaps) still see it, so every
    problem is listed at once."""

    def __init__(self, diagnostics: list[Diagnostic], settings: object = None) -> None:
        super().__init__(diagnostics)
        self.settings = settings


class ApiError(AgentformError):
    """The service answered with an error, or could not be reached."""

    def __init__(
        self, method: str, path: str, status: int | None, message: str, retried: bool = False
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        self.retried = retried  # an earlier attempt of the call may have been carried out
        where = f"{method} {path}"
        super().__init__(f"{where}: {status} {message}" if status else f"{where}: {message}")


class UnexpectedAnswer(ApiError):
    """A successful status with a body that is not what the API answers (an HTML
    login page of a proxy, a web server that is not the service)."""

    def __str__(self) -> str:
        return self.message


class ReadError(AgentformError):
    """A live read was incomplete or inconsistent; planning on it would be unsafe."""


class StalePlanError(AgentformError):
    """The live workspace changed since the plan was made; nothing was written."""


class UnresolvedSecret(AgentformError):
    """A secret whose variable is not set was needed for its value."""


class Conflict(AgentformError):
    """An object of the name exists and is not what the files ask for."""


class WorkspaceLocked(AgentformError):
    """Another run holds the workspace lock."""
