"""Every kind of job the service schedules, and its handler: the one place they meet.

A module that schedules a new kind of job adds its handler here. `create_app`
refuses to start over a database holding pending jobs of a kind not named
here (`start_errors.UnhandledJobKind`): they would never run.
"""

from __future__ import annotations

from typing import Any

from agentform.service.batches import scheduler
from agentform.service.delivery import outbox, sending
from agentform.service.executions import lifecycle, stepping
from agentform.service.runtime import IoJobHandler, JobHandlers
from agentform.service.upkeep import retention


def service_handlers(*, deliveries: IoJobHandler[Any, Any] | None = None) -> JobHandlers:
    """A fresh registry of the service's handlers (one per app and its runner);
    `deliveries`: the delivery jobs' handler when delivery workers send them
    (runtime/elsewhere.py), instead of sending them in-process."""
    handlers = JobHandlers()
    handlers.add(lifecycle.STEP_JOB, stepping.step_job)
    handlers.add(lifecycle.TIMEOUT_JOB, stepping.timeout_job)
    handlers.add(scheduler.RELEASE_JOB, scheduler.release_job)
    handlers.add(scheduler.FILL_JOB, scheduler.fill_job)
    handlers.add(outbox.DELIVERY_JOB, deliveries or sending.DeliveryJob())
    handlers.add(retention.RETENTION_JOB, retention.forget_old_history, upkeep=True)
    return handlers
