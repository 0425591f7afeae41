"""Wire models of executions (docs/service/contract.md#executions): what the execution
operations answer and take.

The execution object is the contract's, a superset of what the public SDK parses:
it requires `workflowId`, `workflowVersionId`, `agentName`, `workflowName`,
`humanLabels`, `comments` and `hasBeenRerun`, and reads the result from
`executionResult`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agentform.rules.execute import ExecutionStatus

Status = ExecutionStatus
"""An execution's status, as the contract says (rules/execute.py)."""


class ExecutionCreated(BaseModel):
    executionId: str
    status: Status


class StatusChange(BaseModel):
    executionId: str
    status: Status


class ExecutionResult(BaseModel):
    """How it ended, in the public SDK's shape: `outcome` is `failure` for a failed one."""

    id: str
    executionId: str
    outcome: str
    reasoning: str
    result: Any = None
    createdAt: str


class Execution(BaseModel):
    id: str
    agentId: str
    organizationId: str
    status: Status
    version: int
    inputs: dict[str, Any]
    metadata: dict[str, str]
    agentProfileId: str | None = None
    agentProfilePoolId: str | None = None
    batchId: str | None = None
    result: dict[str, Any] | None = Field(
        default=None, description="The result of a completed execution."
    )
    failureReason: str | None = Field(default=None, description="Why a failed execution failed.")
    createdAt: str
    startedAt: str | None = None
    terminalAt: str | None = None
    pausedBy: str | None = None
    cancelledBy: str | None = None
    # what the public SDK requires
    workflowId: str
    workflowVersionId: str
    workflowVersion: int
    agentName: str
    workflowName: str
    humanLabels: list[Any] = []
    comments: list[Any] = []
    hasBeenRerun: bool = False
    executionResult: ExecutionResult | None = None
    duration: float | None = Field(
        default=None, description="Seconds from start to end, once the execution has ended."
    )


class UserMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    message: Annotated[str, StringConstraints(min_length=1, max_length=10_000)]


class UserMessageAccepted(BaseModel):
    executionId: str
    status: Status
