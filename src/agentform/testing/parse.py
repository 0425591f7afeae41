"""Reading test files: YAML with positions, the format's models, and the names a
test uses checked against the workspace, every problem at file:line, all at once,
before anything runs.

Checked beyond the format: a step's execution name is bound by an earlier
`as:`, a webhook is one the workspace declares, an event is one the service
emits, a pool is one the workspace declares, an agent is one of the seed's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import ValidationError

from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.problems import did_you_mean, problems_from
from agentform.core.yamlpos import Located, parse, problem_of
from agentform.rules.batch_statuses import BatchStatus
from agentform.rules.execute import ExecutionStatus
from agentform.rules.webhook_events import ATTACHABLE_EVENTS
from agentform.testing.advancing import advance_problem
from agentform.testing.model import (
    MAX_STEPS,
    MAX_TESTS,
    Expect,
    Step,
    TestFile,
)

MAX_TEST_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Names:
    """What a test may name: the workspace's webhooks, pools and batches (`AGENT/NAME`:
    a seed holds none, so a batch the files do not declare never exists), the seed's
    agents. None: not known (the seed not read yet, a workspace that did not load),
    so not checked."""

    webhooks: frozenset[str] | None
    pools: frozenset[str] | None
    agents: frozenset[str] | None = None
    batches: frozenset[str] | None = frozenset()


@dataclass(frozen=True)
class LoadedFile:
    path: Path
    shown: str  # the path as messages name it
    model: TestFile | None  # None: the file has problems (its valid steps are still checked)
    doc: Located

    def at(self, *parts: str | int) -> Position:
        line, column = self.doc.where(parts)
        return Position(self.shown, line, column)


def read_test_file(path: Path, shown: str, diags: Diagnostics) -> LoadedFile | None:
    """The validated file, or None with its problems added to `diags`."""
    try:
        size = path.stat().st_size
        if size > MAX_TEST_FILE_BYTES:
            diags.error(
                f"the file is {size:,} bytes, over the 1 MiB a test file may hold", Position(shown)
            )
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        diags.error(f"cannot read the test file: {reason}", Position(shown))
        return None
    try:
        doc = parse(text)
    except yaml.YAMLError as exc:
        problem, mark = problem_of(exc)
        diags.error(f"not valid YAML: {problem}", Position(shown, *(mark or (0, 0))))
        return None
    if not doc.data or not isinstance(doc.data, dict):  # empty, notes, a list: pydantic
        # would say "body: Input should be a valid dictionary or instance of TestFile"
        shape = "a test file is a mapping with a list of tests (tests: [{name: ..., steps: [...]}])"
        diags.error(shape, Position(shown, 1, 1))
        return LoadedFile(path, shown, None, doc)
    try:
        model: TestFile | None = TestFile.model_validate(doc.data)
    except ValidationError as exc:
        model = None
        for p in problems_from(exc, model=TestFile):
            parts = () if p.parameter == "body" else tuple(_part(x) for x in p.parameter.split("."))
            line, column = doc.where(parts)
            diags.error(f"{p.parameter}: {p.detail}", Position(shown, line, column))
    return LoadedFile(path, shown, model, doc)


def valid_steps(loaded: LoadedFile) -> list[list[tuple[int, Step]]]:
    """Each test's steps that are valid, with their index: the names of those are
    checked even when another part of the file is wrong, so all problems show at once."""
    if loaded.model is not None:
        return [list(enumerate(case.steps)) for case in loaded.model.tests]
    tests = loaded.doc.data.get("tests") if isinstance(loaded.doc.data, dict) else None
    out: list[list[tuple[int, Step]]] = []
    for case in tests[:MAX_TESTS] if isinstance(tests, list) else []:
        raw = case.get("steps") if isinstance(case, dict) else None
        steps = []
        for s, step in enumerate(raw[:MAX_STEPS] if isinstance(raw, list) else []):
            with contextlib.suppress(ValidationError):  # reported with the file's problems
                steps.append((s, Step.model_validate(step)))
        out.append(steps)
    return out


def _part(text: str) -> str | int:
    return int(text) if text.isdigit() else text


def check_names(loaded: LoadedFile, names: Names, diags: Diagnostics) -> None:
    """Every name a step uses, against what exists; problems at the name's line."""
    for t, steps in enumerate(valid_steps(loaded)):
        bound: list[str] = []
        for s, step in steps:
            where = ("tests", t, "steps", s, step.kind)
            for field, value, known in _names_in(step, names, bound):
                if known is not None and value not in known:
                    what = [p for p in field.split(".") if not p.isdigit()][-1]
                    what = "event" if what == "events" else what
                    hint = did_you_mean(value, known) or _listing(known)
                    diags.error(
                        f"{what} '{value}' is not known{hint}",
                        loaded.at(*where, *(_part(x) for x in field.split("."))),
                    )
            _check_values(loaded, step, where, diags, bound, names)
            if step.execute is not None and step.execute.as_:
                bound.append(step.execute.as_)


def _check_values(
    loaded: LoadedFile,
    step: Step,
    where: tuple[str | int, ...],
    diags: Diagnostics,
    bound: Sequence[str],
    names: Names,
) -> None:
    """An advance's duration or condition, an expectation's status."""
    agents, batches = names.agents, names.batches
    if step.advance is not None and (
        problem := advance_problem(step.advance, bound, agents, batches)
    ):
        diags.error(f"advance: {problem}", loaded.at(*where))
    expect = step.expect
    if expect is None or expect.status is None:
        return
    allowed = get_args(ExecutionStatus) if expect.execution is not None else get_args(BatchStatus)
    if expect.status not in allowed:
        hint = did_you_mean(expect.status, allowed) or f" (one of {', '.join(allowed)})"
        diags.error(f"status '{expect.status}' is not a status{hint}", loaded.at(*where, "status"))


def _listing(known: Iterable[str]) -> str:
    names = sorted(known)
    if not names:
        return " (there are none)"
    shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    return f" (known: {shown})"


def _names_in(
    step: Step, names: Names, bound: Sequence[str]
) -> Iterable[tuple[str, str, Iterable[str] | None]]:
    """(field path inside the step, name, the names it may be) of one step."""
    if step.execute is not None:
        yield "agent", step.execute.agent, names.agents
        if step.execute.pool:
            yield "pool", step.execute.pool, names.pools
    for control in (step.message, step.pause, step.resume, step.cancel):
        if control is not None:
            yield "execution", control.execution, bound
    if step.receiver is not None:
        yield "webhook", step.receiver.webhook, names.webhooks
    if step.expect is not None:
        yield from _names_in_expect(step.expect, names, bound)


def _names_in_expect(
    expect: Expect, names: Names, bound: Sequence[str]
) -> Iterable[tuple[str, str, Iterable[str] | None]]:
    if expect.execution is not None:
        yield "execution", expect.execution, bound
    if expect.batch is not None:
        yield "batch", expect.batch, names.batches
    if expect.pool is not None:
        yield "pool", expect.pool, names.pools
    if expect.executions is not None and expect.executions.pool is not None:
        yield "executions.pool", expect.executions.pool, names.pools
    for i, d in enumerate(expect.deliveries or []):
        yield f"deliveries.{i}.webhook", d.webhook, names.webhooks
        if d.execution is not None:
            yield f"deliveries.{i}.execution", d.execution, bound
        for j, event in enumerate(d.events or []):
            yield f"deliveries.{i}.events.{j}", event, ATTACHABLE_EVENTS
        if d.event is not None:
            yield f"deliveries.{i}.event", d.event, ATTACHABLE_EVENTS


def seed_agents(seed: Any) -> frozenset[str]:
    """The agent names of a seed (every organization's)."""
    return frozenset(a.name for org in seed.organizations for a in org.agents)
