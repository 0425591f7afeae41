"""How a user says how far to move a manual clock: a duration, or a condition to wait for.

Both halves read these words: the service's `POST /agentform/v1/clock/advance`
(service/runtime/advancing.py), `agentform service advance`, and the workspace
tests of `agentform test`. So the grammar is written once, here:

- a duration is `90s`, `2m`, `1h30m`, `1d`, `0.5s` (units d, h, m, s, largest
  first, each at most once), or `0`; at most MAX_DURATION (366d);
- a condition is `KIND/KEY is STATUS`: `batches/AGENT/NAME is completed`
  (AGENT: the agent's name or id; NAME: the batch's), `executions/ID is failed`.
  `finished` means any final status (completed, failed or cancelled).

A mistake raises `ClockWordsError` saying what is accepted, with a did-you-mean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.rules.batch_statuses import BATCH_STATUSES
from agentform.rules.execute import EXECUTION_STATUSES

MAX_DURATION = 366 * 86400.0
"""The longest a clock moves in one go: a year (and a day), in seconds."""
MAX_TEXT = 600
"""The longest duration or condition text read."""
DEFAULT_WITHIN = 86400.0
"""How long `until` waits at most, unless told: a day of the manual clock (the
service's default, and what a test's failing `until` says it waited)."""

FINISHED = "finished"
"""A condition's status meaning any final one."""
FINAL = {"executions": ("completed", "failed", "cancelled"), "batches": ("completed", "cancelled")}
STATUSES = {
    "executions": (*EXECUTION_STATUSES, FINISHED),
    "batches": (*BATCH_STATUSES, FINISHED),
}
KEY_SHAPES = {"executions": "executions/ID", "batches": "batches/AGENT/NAME"}

_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_DURATION = re.compile(
    r"^(?:(\d+(?:\.\d+)?)d)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$"
)
DURATION_FORMS = "a duration such as 90s, 2m, 1h30m or 1d"


class ClockWordsError(AgentformError, ValueError):
    """A duration or condition that cannot be read; the message says what is accepted."""


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:59] + "…")


def parse_duration(text: str) -> float:
    """Seconds of a duration (`90s`, `2m`, `1h30m`, `1d`, `0`), at most MAX_DURATION."""
    written = text.strip()
    if len(written) > MAX_TEXT:
        raise ClockWordsError(f"a duration is at most {MAX_TEXT} characters")
    if written == "0":
        return 0.0
    match = _DURATION.match(written.lower())
    if not written or match is None:
        hint = " (say the unit: 90s)" if re.fullmatch(r"\d+(\.\d+)?", written) else ""
        raise ClockWordsError(f"{_quoted(written)} is not {DURATION_FORMS}{hint}")
    seconds = sum(
        float(amount) * unit
        for amount, unit in zip(match.groups(), _UNITS.values(), strict=True)
        if amount
    )
    if seconds > MAX_DURATION:
        raise ClockWordsError(f"{_quoted(written)} is longer than the most allowed, 366d")
    return seconds


@dataclass(frozen=True)
class Condition:
    """`KIND/KEY is STATUS`: what a clock advances until."""

    kind: str
    """`executions` or `batches`."""
    key: tuple[str, ...]
    """(ID,) of an execution; (AGENT, NAME) of a batch."""
    status: str

    def __str__(self) -> str:
        return f"{self.kind}/{'/'.join(self.key)} is {self.status}"

    def accepts(self, status: str | None) -> bool:
        """Whether a subject in `status` (None: there is none yet) meets the condition."""
        if status is None:
            return False
        if self.status == FINISHED:
            return status in FINAL[self.kind]
        return status == self.status


CONDITION_FORMS = "KIND/KEY is STATUS: batches/AGENT/NAME is completed, executions/ID is failed"


def parse_condition(text: str) -> Condition:
    """A condition, or a ClockWordsError saying what is accepted."""
    written = " ".join(text.split())
    if len(written) > MAX_TEXT:
        raise ClockWordsError(f"a condition is at most {MAX_TEXT} characters")
    subject, sep, status = written.rpartition(" is ")
    if not sep or not subject or not status or " " in status:
        raise ClockWordsError(f"{_quoted(written)} is not a condition; write {CONDITION_FORMS}")
    kind, _, rest = subject.partition("/")
    if kind not in KEY_SHAPES:
        kinds = ", ".join(KEY_SHAPES)
        raise ClockWordsError(
            f"{_quoted(kind)} is not a kind a condition names ({kinds})"
            + did_you_mean(kind, KEY_SHAPES)
        )
    key = tuple(rest.split("/")) if rest else ()
    if len(key) != KEY_SHAPES[kind].count("/") or not all(part.strip() for part in key):
        raise ClockWordsError(f"{_quoted(subject)}: write {KEY_SHAPES[kind]}")
    if status not in STATUSES[kind]:
        accepted = ", ".join(STATUSES[kind])
        raise ClockWordsError(
            f"{_quoted(status)} is not a status of {kind} ({accepted})"
            + did_you_mean(status, STATUSES[kind])
        )
    return Condition(kind, tuple(part.strip() for part in key), status)
