"""The execute-request rules (docs/service/contract.md#execute-request, #executions), written once.

Three callers share them: the service's `POST /agents/{agentId}/execute`, the
items of an execution batch (service), and the batch items of a workspace
(provisioner). Two layers:

- `ExecuteRequest` is the shape: every field optional, unknown fields refused,
  `metadata` string to string, `tempFiles` items `{id, name}`,
  `executionOptions` only `softTimeoutMins` (a number > 0) and `variantKey`.
  `parse_execute_request` validates a mapping against it.
- `check_execute_request` holds the rules that need the agent and the
  organization's data, read through the small `OrganizationLookup` protocol:
  profile xor pool, each naming something of the organization, `version` among
  the agent's versions, temp files staged by the same organization.

Every problem can be placed under a prefix (`items[17]`), so a batch names the
item at fault.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from agentform.core.model_data import model_data
from agentform.core.problems import Problem, RuleViolation, problems_from, under
from agentform.rules.values import MAX_JSON_DEPTH, JsonObject

ExecutionStatus = Literal[
    "queued",
    "starting",
    "running",
    "paused",
    "awaiting_confirmation",
    "completed",
    "failed",
    "cancelled",
]
"""An execution's status (its moves are the service's `models/execution_status.py`)."""
EXECUTION_STATUSES: tuple[ExecutionStatus, ...] = get_args(ExecutionStatus)

# Ids arrive as JSON strings: strict mode would refuse a str for a UUID.
Id = Annotated[uuid.UUID, Field(strict=False)]
OnCapacityLimit = Literal["reject", "queue"]

MAX_SOFT_TIMEOUT_MINS = 43_200
"""30 days: longer than any run, and far inside what a timestamp can hold."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ExecutionOptions(_Strict):
    """Per-execution runtime options: these two and nothing else."""

    softTimeoutMins: (
        Annotated[float, Field(gt=0, le=MAX_SOFT_TIMEOUT_MINS, allow_inf_nan=False)] | None
    ) = Field(
        default=None,
        description="Minutes an execution may run before it fails as timed out "
        f"(at most {MAX_SOFT_TIMEOUT_MINS:,}: 30 days).",
    )
    variantKey: str | None = Field(
        default=None, description="Which variant of the agent to run (A/B tests); default its own."
    )


class TempFileRef(_Strict):
    """A file staged through `POST /temp-files`, as that operation answered it."""

    id: Id = Field(description="The staged file's id, as `POST /temp-files` answered it.")
    name: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="The file's name, as `POST /temp-files` answered it."
    )


class ExecuteRequest(_Strict):
    """The body of an execute (docs/service/contract.md#execute-request): every field optional."""

    # What JSON Schema can say of the profile-xor-pool rule (a generator then keeps to it).
    model_config = ConfigDict(
        json_schema_extra={"not": {"required": ["agentProfileId", "agentProfilePoolId"]}}
    )

    agentProfileId: Id | None = Field(
        default=None, description="Mutually exclusive with agentProfilePoolId."
    )
    agentProfilePoolId: Id | None = Field(
        default=None, description="Mutually exclusive with agentProfileId."
    )
    dynamicData: JsonObject | None = Field(
        default=None,
        description="Deprecated: use inputs. Merged under inputs (inputs win).",
        # Documented as deprecated; `deprecated=True` would warn on every read of it here.
        json_schema_extra={"deprecated": True},
    )
    executionOptions: ExecutionOptions | None = Field(
        default=None, description="Runtime options: softTimeoutMins, variantKey."
    )
    inputs: JsonObject | None = Field(
        default=None,
        description="The agent's input variables, by name "
        f"(JSON nested at most {MAX_JSON_DEPTH} levels, finite numbers).",
    )
    metadata: dict[str, str] | None = Field(
        default=None,
        description="String labels kept with the execution (webhook filters match them).",
    )
    tempFiles: list[TempFileRef] | None = Field(
        default=None, description="Files staged through `POST /temp-files` for this execution."
    )
    version: int | None = Field(
        default=None, description="One of the agent's versions; default the published one."
    )
    onCapacityLimit: OnCapacityLimit | None = Field(
        default=None,
        description="At capacity: `reject` (the default) answers 409, `queue` queues it.",
    )

    @property
    def uses_dynamic_data(self) -> bool:
        """The deprecated field was sent (the answer then says `Deprecation: true`)."""
        return self.dynamicData is not None

    def merged_inputs(self) -> dict[str, Any]:
        """`dynamicData` merged under `inputs`: on a clash, inputs win."""
        return {**(self.dynamicData or {}), **(self.inputs or {})}

    @property
    def queues_at_capacity(self) -> bool:
        return self.onCapacityLimit == "queue"

    @property
    def soft_timeout_mins(self) -> float | None:
        return self.executionOptions.softTimeoutMins if self.executionOptions else None

    def as_sent(self) -> dict[str, Any]:
        """The request as JSON, only the fields that were given (a batch item keeps this)."""
        data: dict[str, Any] = model_data(self, exclude_unset=True)
        return data


@dataclass(frozen=True)
class AgentVersions:
    """What the rules need of the agent being executed."""

    versions: Sequence[int]
    published_version: int


class OrganizationLookup(Protocol):
    """The organization's data the rules read; the service answers from its store,
    a batch of many items may answer from a cache."""

    def profile_exists(self, profile_id: str) -> bool:
        """An agent profile of this organization has this id."""
        ...

    def pool_exists(self, pool_id: str) -> bool:
        """An agent profile pool of this organization has this id."""
        ...

    def staged_file_name(self, file_id: str) -> str | None:
        """The name of the file this organization staged under this id, else None."""
        ...


def parse_execute_request(data: Any, prefix: str = "") -> ExecuteRequest:
    """The request's shape, or RuleViolation with every problem under `prefix`."""
    try:
        return ExecuteRequest.model_validate(data)
    except ValidationError as exc:
        raise RuleViolation(problems_from(exc, prefix, ExecuteRequest)) from None


def effective_version(request: ExecuteRequest, agent: AgentVersions) -> int:
    """The version that runs: the one asked for, else the published one."""
    return request.version if request.version is not None else agent.published_version


def check_execute_request(
    request: ExecuteRequest,
    agent: AgentVersions,
    lookup: OrganizationLookup,
    prefix: str = "",
) -> list[Problem]:
    """Every problem of a well-shaped request against the agent and the organization."""
    problems: list[Problem] = []
    profile, pool = request.agentProfileId, request.agentProfilePoolId
    if profile is not None and pool is not None:
        problems.append(
            Problem("agentProfilePoolId", "cannot be used together with agentProfileId")
        )
    else:
        if profile is not None and not lookup.profile_exists(str(profile)):
            problems.append(
                Problem("agentProfileId", f"no agent profile {profile} in this organization")
            )
        if pool is not None and not lookup.pool_exists(str(pool)):
            problems.append(
                Problem("agentProfilePoolId", f"no agent profile pool {pool} in this organization")
            )
    if request.version is not None and request.version not in agent.versions:
        known = ", ".join(str(v) for v in sorted(agent.versions))
        problems.append(
            Problem("version", f"the agent has no version {request.version} (versions: {known})")
        )
    for index, ref in enumerate(request.tempFiles or ()):
        problems.extend(_temp_file_problems(index, ref, lookup))
    return under(problems, prefix)


def _temp_file_problems(index: int, ref: TempFileRef, lookup: OrganizationLookup) -> list[Problem]:
    staged = lookup.staged_file_name(str(ref.id))
    if staged is None:
        return [
            Problem(
                f"tempFiles.{index}.id",
                f"{ref.id} is not a file staged through POST /temp-files by this organization",
            )
        ]
    if staged != ref.name:
        return [
            Problem(
                f"tempFiles.{index}.name",
                f"'{ref.name}' is not the name the file was staged with ('{staged}')",
            )
        ]
    return []


def validate_execute_request(
    data: Mapping[str, Any] | Any,
    agent: AgentVersions,
    lookup: OrganizationLookup,
    prefix: str = "",
) -> ExecuteRequest:
    """Shape and organization rules together; RuleViolation lists every problem."""
    request = parse_execute_request(data, prefix)
    problems = check_execute_request(request, agent, lookup, prefix)
    if problems:
        raise RuleViolation(problems)
    return request
