"""The service's runtime for time-driven work: a clock, durable jobs, one runner.

- `Clock` (`WallClock` in production, `ManualClock` in tests) says what time it is.
- Work that falls due later is a job in SQLite: `store.jobs.schedule(conn, kind,
  due_at, payload, key=..., lane=...)` inside the caller's write transaction.
- Handlers are registered per job kind, the service's in one place
  (`service/job_handlers.py`); each is handed the runner's `RunContext`.
- The `Runner` is one asyncio task per app, started by the app's lifespan (or,
  in-process, by `service.http.inprocess.InProcessTransport`), driven by the clock.
"""

from agentform.service.clock import Clock, ManualClock, WallClock
from agentform.service.runtime.context import RunContext
from agentform.service.runtime.handlers import Done, IoJobHandler, JobHandlers, TxHandler
from agentform.service.runtime.runner import Runner

__all__ = [
    "Clock",
    "Done",
    "IoJobHandler",
    "JobHandlers",
    "ManualClock",
    "RunContext",
    "Runner",
    "TxHandler",
    "WallClock",
]
