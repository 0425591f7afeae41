"""The execution status machine: the statuses, the allowed moves, what is final.

Every status change of an execution goes through `check_move`, so no path of
the service (an API call, a runner step, a timeout) can make a move this table
does not allow, and a terminal status is never left.
"""

from __future__ import annotations

from typing import get_args

from agentform.core.errors import AgentformError
from agentform.service.models.executions import Status

STATUSES: tuple[Status, ...] = get_args(Status)

TERMINAL: frozenset[Status] = frozenset({"completed", "failed", "cancelled"})
ACTIVE: frozenset[Status] = frozenset({"starting", "running", "paused", "awaiting_confirmation"})
"""Statuses that hold one unit of the organization's capacity (and the profile, if any)."""

MOVES: dict[Status, frozenset[Status]] = {
    "queued": frozenset({"starting", "cancelled"}),
    "starting": frozenset({"running", "failed", "cancelled"}),
    "running": frozenset({"paused", "awaiting_confirmation", "completed", "failed", "cancelled"}),
    "paused": frozenset({"running", "failed", "cancelled"}),
    "awaiting_confirmation": frozenset({"running", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}

# What each API call may move from; anything else is 409.
PAUSABLE: frozenset[Status] = frozenset({"running"})
RESUMABLE: frozenset[Status] = frozenset({"paused"})
CANCELLABLE: frozenset[Status] = frozenset(MOVES) - TERMINAL
MESSAGEABLE: frozenset[Status] = frozenset(MOVES) - TERMINAL


class StatusMoveError(AgentformError):
    """A move the status machine does not allow; nothing was changed."""

    def __init__(self, current: str, wanted: str) -> None:
        self.current = current
        self.wanted = wanted
        super().__init__(f"an execution that is {current} cannot become {wanted}")


def allowed(current: str, wanted: str) -> bool:
    return wanted in MOVES.get(current, frozenset())  # type: ignore[call-overload]


def check_move(current: str, wanted: str) -> None:
    if not allowed(current, wanted):
        raise StatusMoveError(current, wanted)


def is_terminal(status: str) -> bool:
    return status in TERMINAL
