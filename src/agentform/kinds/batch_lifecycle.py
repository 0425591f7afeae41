"""What a difference means for a batch, by its lifecycle (the `batches` kind,
kinds/batches.py, extends `BatchLifecycle`), each decision with its reason in the plan:

- unchanged: left alone, whatever its status;
- changed and pending: replace (cancel, then create: the API has no update);
- changed and started (running, paused): a warning, nothing can be applied;
- changed and completed: history, not a change and not drift; the plan says that a
  new run needs a new name;
- removed (ensure: absent, prune): pending or paused ones are cancelled, a running
  one only with --allow-cancel-running, a completed one is history;
- absent and its startAt has passed: a warning, not a create, unless --allow-past-start.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentform.kinds.base import Kind
from agentform.kinds.batch_model import BatchState
from agentform.kinds.context import PlanContext, PlanOptions
from agentform.kinds.model import (
    ActionGoal,
    ApiCall,
    Decision,
    Declared,
    FieldChange,
    LiveObject,
    State,
)

CANCEL = "/cancel"
FINAL = ("cancelled", "completed")


class BatchLifecycle(Kind):
    """A batch's decisions: create, replace, leave alone or cancel (no `name`: it
    registers no kind of its own)."""

    @staticmethod
    def _start_passed(desired: State, ctx: PlanContext) -> str | None:
        """The desired startAt when it has passed and --allow-past-start is not given:
        a batch created now (or created again by a replace) would start at once."""
        assert isinstance(desired, BatchState)
        start = desired.startAt
        if start is None or ctx.options.allow_past_start:
            return None
        return start if datetime.fromisoformat(start) < ctx.options.current_time() else None

    def decide_create(self, desired: State, ctx: PlanContext, declared: Declared) -> Decision:
        assert isinstance(desired, BatchState) and desired.startAt is not None
        if self._start_passed(desired, ctx):
            return Decision(
                None,
                "not created: its startAt has passed",
                warning=f"startAt {desired.startAt} has passed, so the batch is not created "
                "(--allow-past-start creates it: its due items then start at once)",
            )
        return super().decide_create(desired, ctx, declared)

    def stale_reason(
        self, action: str, calls: tuple[ApiCall, ...], options: PlanOptions
    ) -> str | None:
        """A create planned while startAt was ahead, applied after it: the batch would
        start at once, which the plan did not say."""
        start = next((c.body["startAt"] for c in calls if c.creates), None)
        if start is None or options.allow_past_start:
            return None
        if datetime.fromisoformat(start) >= options.current_time():
            return None
        return (
            f"its startAt {start} has passed since the plan was made, so it would start "
            "at once; plan again, or apply with --allow-past-start"
        )

    def decide_update(
        self, live: LiveObject, desired: State, changes: list[FieldChange], ctx: PlanContext
    ) -> Decision:
        status = live.raw["status"]
        fields = ", ".join(c.field for c in changes)
        passed = self._start_passed(desired, ctx)
        if status == "pending" and passed:  # its replacement would start at once
            return Decision(
                None,
                f"pending batch differs ({fields}), not replaced: its startAt has passed",
                warning=f"startAt {passed} has passed, so the pending batch is not replaced "
                "(--allow-past-start replaces it: its due items then start at once)",
            )
        if status == "pending":
            calls = (*self._cancel(live), *self.create_calls(desired))
            return Decision(
                "replace",
                f"pending batch differs ({fields}): the API cannot change a batch, so it is "
                "cancelled and created again",
                calls,
            )
        if status == "completed":  # history: its files describe a run that is over
            return Decision(
                None,
                f"completed: history (its files differ in {fields}: not a change)",
                note=f"the batch is completed, so it is history: the files differ in {fields}, "
                "but that is no change and no drift; a new run needs a new name "
                f"(e.g. name: {live.key[1]}-{{{{ vars.run_date }}}}, planned with "
                "--var run_date=2026-12-02)",
            )
        return Decision(
            None,
            f"{status}: differs ({fields}) but cannot be changed",
            warning=f"the batch is {status}: it differs from the files in {fields}, but a "
            "started or finished batch cannot be changed; it is left as it is",
        )

    def decide_delete(self, live: LiveObject, reason: str, ctx: PlanContext) -> Decision:
        status = live.raw["status"]
        if status in ("pending", "paused"):
            why = f"{reason}: a {status} batch is cancelled"
            return Decision("cancel", why, self._cancel(live))
        if status == "running":
            if ctx.options.allow_cancel_running:
                return Decision(
                    "cancel",
                    f"{reason}: running, cancelled (--allow-cancel-running)",
                    self._cancel(live),
                )
            return Decision(
                None,
                f"{reason}, but running: left alone",
                warning="the batch is running: removing it would cancel the items not yet "
                "triggered; --allow-cancel-running does that",
            )
        return Decision(None, f"{reason}, but {status}: a finished batch is history")

    def _cancel(self, live: LiveObject) -> tuple[ApiCall, ...]:
        return (ApiCall(method="POST", path=f"{self.collection}/{live.id}{CANCEL}"),)

    def action_goal(self, call: ApiCall, path: str) -> ActionGoal | None:
        """A cancel's goal: the batch cancelled, or finished (nothing left to cancel),
        or gone. Read back before a cancel is sent again (its answer lost, or a 5xx),
        and when it fails: another apply of the same files may have cancelled it."""
        if call.method != "POST" or not path.endswith(CANCEL):
            return None
        return ActionGoal(path.removesuffix(CANCEL), _cancel_needless)

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        return list(self._cancel(live))


def _cancel_needless(batch: Any) -> bool:
    return batch is None or (isinstance(batch, dict) and batch.get("status") in FINAL)
