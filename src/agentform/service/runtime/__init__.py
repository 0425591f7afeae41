"""The service's runtime for time-driven work: a clock, durable jobs, one runner.

- `Clock` (`WallClock` in production, `ManualClock` in tests) says what time it is.
- Work that falls due later is a job in SQLite: `store.jobs.schedule(conn, kind,
  due_at, payload, key=..., lane=...)` inside the caller's write transaction.
- Handlers are registered per job kind (`@job_handler`, `@io_job_handler`).
- The `Runner` is one asyncio task per app, started by the app's lifespan (or,
  in-process, by `service.http.inprocess.InProcessTransport`), driven by the clock.
"""

from agentform.service.clock import Clock, ManualClock, WallClock
from agentform.service.runtime.handlers import (
    HANDLERS,
    IoJobHandler,
    JobHandlers,
    io_job_handler,
    job_handler,
)
from agentform.service.runtime.runner import RunContext, Runner, current_context

__all__ = [
    "HANDLERS",
    "Clock",
    "IoJobHandler",
    "JobHandlers",
    "ManualClock",
    "RunContext",
    "Runner",
    "WallClock",
    "current_context",
    "io_job_handler",
    "job_handler",
]
