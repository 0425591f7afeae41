"""The test file's format (`tests/*.yaml`): the models a file is validated against.

A file holds an optional `seed` (a path to a seed file in `service run --seed`
format, or the seed inline), an optional `start` (the time the test's manual
clock starts at) and its `tests`, each a name and `steps`. A step is a mapping
with exactly one key naming what it does (`execute`, `advance`, `expect`,
`receiver`, `message`, `pause`, `resume`, `cancel`); unknown keys anywhere get a
"did you mean". A file is hostile input: every list and text is bounded here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from agentform.core.problems import rule_error
from agentform.rules.execute import ExecutionStatus

MAX_TESTS = 200
MAX_STEPS = 500
MAX_NAME = 200
MAX_LIST = 200

Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME)]
Metadata = Annotated[dict[Name, Annotated[str, StringConstraints(max_length=1000)]], Field()]
DeliveryStatus = Literal["pending", "delivered", "failed"]
STEP_KEYS = ("execute", "advance", "expect", "receiver", "message", "pause", "resume", "cancel")
EXPECT_SUBJECTS = ("execution", "deliveries", "batch", "plan", "calls", "policy")


class _Strict(BaseModel):
    # Built when first used: reading a test file builds TestFile alone, with the
    # models it holds inside its validator, not one validator for each of them too.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class Execute(_Strict):
    """`POST /agents/{agent}/execute`, names resolved against the test's service."""

    agent: Name
    pool: Name | None = None
    profile: Name | None = None
    inputs: dict[str, Any] = {}
    metadata: Metadata = {}
    version: int | None = None
    queue: bool = False  # onCapacityLimit: queue
    as_: Name | None = Field(None, alias="as")

    @model_validator(mode="after")
    def _one_target(self) -> Execute:
        if self.pool and self.profile:
            raise rule_error("give pool or profile, not both")
        return self


class Receiver(_Strict):
    """How a webhook's in-process receiver answers from now on."""

    webhook: Name
    fail: Annotated[int, Field(ge=1, le=100)] | None = None  # 500 this many times, then 2xx
    answer: Annotated[int, Field(ge=200, le=599)] | Literal["timeout"] | None = None

    @model_validator(mode="after")
    def _one_behaviour(self) -> Receiver:
        if (self.fail is None) == (self.answer is None):
            raise rule_error("give exactly one of fail (a count) or answer (a status or timeout)")
        return self


class Message(_Strict):
    execution: Name
    text: Annotated[str, StringConstraints(min_length=1, max_length=10_000)]


class Control(_Strict):
    """pause, resume or cancel of a named execution."""

    execution: Name


class DeliveryExpect(_Strict):
    """What one webhook's receiver got (for one execution, when named)."""

    webhook: Name
    execution: Name | None = None
    events: Annotated[list[Name], Field(max_length=MAX_LIST)] | None = None
    event: Name | None = None  # narrows body/headers/signature/attempts/status to one event
    status: DeliveryStatus | None = None
    attempts: Annotated[int, Field(ge=0, le=100)] | None = None
    unwrapped: bool | None = None
    body: Any = None
    headers: Annotated[list[Name], Field(max_length=MAX_LIST)] | dict[Name, str] | None = None
    signature: Literal["valid"] | None = None


class BatchExecutions(_Strict):
    """What every execution a batch started must show."""

    status: ExecutionStatus | None = None
    pool: Name | None = None


class CallExpect(_Strict):
    """Calls the apply made: `method` and a path pattern (`*` for one segment)."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    count: Annotated[int, Field(ge=0, le=100_000)] | None = None


class Expect(_Strict):
    """One expectation: its subject is exactly one of EXPECT_SUBJECTS."""

    execution: Name | None = None
    status: str | None = None
    result: Any = None
    pool: Name | None = None
    deliveries: Annotated[list[DeliveryExpect], Field(min_length=1, max_length=MAX_LIST)] | None = (
        None
    )
    batch: Annotated[str, StringConstraints(pattern=r"^[^/]+/.+$", max_length=401)] | None = None
    counts: (
        dict[
            Literal["total", "pending", "awaitingCapacity", "triggered", "cancelled", "failed"],
            int,
        ]
        | None
    ) = None
    executions: BatchExecutions | None = None
    plan: Literal["empty"] | None = None
    calls: Annotated[list[CallExpect], Field(min_length=1, max_length=MAX_LIST)] | None = None
    policy: Name | None = None  # a rule of the policies, judging the plan the test applied
    violated: bool | None = None  # with policy: whether that plan violates it (default true)

    @model_validator(mode="after")
    def _one_subject(self) -> Expect:
        given = [s for s in EXPECT_SUBJECTS if getattr(self, s) is not None]
        if len(given) != 1:
            raise rule_error(f"give exactly one of {', '.join(EXPECT_SUBJECTS)}")
        allowed = {
            "execution": {"status", "result", "pool"},
            "batch": {"status", "counts", "executions"},
            "policy": {"violated"},
        }.get(given[0], set())
        extra = [
            f
            for f in ("status", "result", "pool", "counts", "executions", "violated")
            if f not in allowed
        ]
        stray = [f for f in extra if getattr(self, f) is not None]
        if stray:
            raise rule_error(f"{', '.join(stray)} does not go with {given[0]}")
        return self


class Step(_Strict):
    execute: Execute | None = None
    advance: Annotated[str, StringConstraints(min_length=1, max_length=300)] | None = None
    expect: Expect | None = None
    receiver: Receiver | None = None
    message: Message | None = None
    pause: Control | None = None
    resume: Control | None = None
    cancel: Control | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and len(data) != 1:
            raise rule_error(f"a step has exactly one of {', '.join(STEP_KEYS)}")
        return data

    @property
    def kind(self) -> str:
        return next(k for k in STEP_KEYS if getattr(self, k) is not None)


class Case(_Strict):
    name: Name
    skip: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None  # why
    steps: Annotated[list[Step], Field(max_length=MAX_STEPS)] = []


class TestFile(_Strict):
    __test__ = False  # not a pytest class

    seed: (
        Annotated[str, StringConstraints(min_length=1, max_length=1000)] | dict[str, Any] | None
    ) = None
    start: datetime | None = None
    tests: Annotated[list[Case], Field(min_length=1, max_length=MAX_TESTS)]
