"""Job handlers, keyed by job kind; modules register theirs by defining them.

Two forms:

- A transactional handler, `@job_handler("kind")` on `def handle(job, conn)`:
  it runs inside a write transaction, in a worker thread (never on the event
  loop), and the job is marked done in that same transaction. If it raises,
  its effects are rolled back and the job is recorded `failed`.

- An I/O handler, `@io_job_handler("kind")` on a subclass of `IoJobHandler`,
  for work that talks to the network (a webhook delivery): `prepare(job, conn)`
  in a write transaction reads what the I/O needs (returning None means there
  is nothing to do: the job is done); `await perform(job, prepared, context)`
  does the I/O with no transaction open; `record(job, conn, prepared, outcome)`
  writes the outcome, and the job is marked done in that transaction, unless
  `record` returns the job's next work: then the job keeps its I/O slot and
  performs that at once (a webhook lane sends its next batch without going
  back to the scheduler). A crash between perform and record leaves the job
  pending: it runs again after a restart (at least once).

A handler that wants to run again later schedules a follow-up job
(`store.jobs.schedule`) in its transaction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job

if TYPE_CHECKING:
    from agentform.service.runtime.runner import RunContext

P = TypeVar("P")
R = TypeVar("R")
TxHandler = Callable[[Job, Conn], None]


class IoJobHandler(ABC, Generic[P, R]):
    """A job whose work is I/O: prepare (transaction), perform (no transaction), record."""

    @abstractmethod
    def prepare(self, job: Job, conn: Conn) -> P | None: ...

    @abstractmethod
    async def perform(self, job: Job, prepared: P, context: RunContext) -> R: ...

    @abstractmethod
    def record(self, job: Job, conn: Conn, prepared: P, outcome: R) -> P | None:
        """Writes `outcome`; returns None (the job is done) or the job's next work,
        prepared in this same transaction, to perform at once."""

    def choose_due(
        self, conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
    ) -> list[Job] | None:
        """Which due jobs of `kind` to start in (at most) `free` slots, `in_flight`
        being the runner's running I/O jobs; None (the default): the oldest due first."""
        return None


Handler = TxHandler | IoJobHandler[Any, Any]


def _name(obj: object) -> str:
    target = obj if callable(obj) and not isinstance(obj, IoJobHandler) else type(obj)
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', '')}"


class JobHandlers:
    """The handler of each job kind."""

    def __init__(self) -> None:
        self._by_kind: dict[str, Handler] = {}

    def add(self, kind: str, handler: Handler) -> None:
        existing = self._by_kind.get(kind)
        # The same definition seen again (a module imported twice) replaces itself.
        if existing is not None and _name(existing) != _name(handler):
            raise ValueError(f"job kind {kind!r} already has a handler: {_name(existing)}")
        self._by_kind[kind] = handler

    def get(self, kind: str) -> Handler | None:
        return self._by_kind.get(kind)

    def kinds(self) -> list[str]:
        return sorted(self._by_kind)

    def handler(self, kind: str) -> Callable[[TxHandler], TxHandler]:
        """Decorator: `fn(job, conn)` handles jobs of `kind` in a write transaction."""

        def register(fn: TxHandler) -> TxHandler:
            self.add(kind, fn)
            return fn

        return register

    def io_handler(
        self, kind: str
    ) -> Callable[[type[IoJobHandler[P, R]]], type[IoJobHandler[P, R]]]:
        """Class decorator: an instance of the IoJobHandler subclass handles `kind`."""

        def register(cls: type[IoJobHandler[P, R]]) -> type[IoJobHandler[P, R]]:
            self.add(kind, cls())
            return cls

        return register


HANDLERS = JobHandlers()
job_handler = HANDLERS.handler
io_job_handler = HANDLERS.io_handler
