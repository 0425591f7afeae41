"""Job handlers, keyed by job kind; the service registers its own in one place
(`service/job_handlers.py`), and a kind without a handler stops the start.

Two forms, each handed the runner's `RunContext` (the clock, the settings,
shared resources) as an argument in every phase:

- A transactional handler, `def handle(job, conn, context)`: it runs inside a
  write transaction, in a worker thread (never on the event loop), and the job
  is marked done in that same transaction. If it raises, its effects are
  rolled back and the job is recorded `failed`.

- An I/O handler, a subclass of `IoJobHandler`, for work that talks to the
  network (a webhook delivery): `prepare(job, conn, context)` in a write
  transaction reads what the I/O needs (returning None means there is nothing
  to do: the job is done); `await perform(job, prepared, context)` does the
  I/O with no transaction open; `record(job, conn, prepared, outcome, context)`
  writes the outcome, and the runner marks the job done in that transaction
  (then runs what a returned `Done` says follows: a successor under the job's
  own key), unless `record` returns the job's next work: then the job keeps its
  I/O slot and performs that at once (a webhook lane sends its next batch
  without going back to the scheduler). A crash between perform and record leaves the job
  pending: it runs again after a restart (at least once).

A handler that wants to run again later schedules a follow-up job
(`store.jobs.schedule`) in its transaction.

A kind added as `upkeep` keeps house on a period of its own (retention's hourly
look): a manual clock does not stop for it, so a long move costs what falls due
on the way, not the simulated time; it runs at the next instant the clock stops
at, and does then what its looks since would have (clock.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from agentform.service.runtime.context import RunContext
from agentform.service.start_errors import UnhandledJobKind
from agentform.service.store.database import Conn
from agentform.service.store.jobs import Job

P = TypeVar("P")
R = TypeVar("R")
TxHandler = Callable[[Job, Conn, RunContext], None]


@dataclass(frozen=True)
class Done:
    """An I/O job is done (as `record` returning None says), and `then` follows in
    the same transaction, once the runner has marked it done: so a successor may
    take the job's own key."""

    then: Callable[[Conn], None]


class IoJobHandler(ABC, Generic[P, R]):
    """A job whose work is I/O: prepare (transaction), perform (no transaction), record."""

    @abstractmethod
    def prepare(self, job: Job, conn: Conn, context: RunContext) -> P | None: ...

    @abstractmethod
    async def perform(self, job: Job, prepared: P, context: RunContext) -> R: ...

    @abstractmethod
    def record(
        self, job: Job, conn: Conn, prepared: P, outcome: R, context: RunContext
    ) -> P | Done | None:
        """Writes `outcome`; returns None or a `Done` (the job is done), or the job's
        next work, prepared in this same transaction, to perform at once."""

    def choose_due(
        self, conn: Conn, kind: str, now: datetime, in_flight: Collection[int], free: int
    ) -> list[Job] | None:
        """Which due jobs of `kind` to start in (at most) `free` slots, `in_flight`
        being the runner's running I/O jobs; None (the default): the oldest due first."""
        return None


Handler = TxHandler | IoJobHandler[Any, Any]


class JobHandlers:
    """The handler of each job kind."""

    def __init__(self) -> None:
        self._by_kind: dict[str, Handler] = {}
        self._upkeep: set[str] = set()

    def add(self, kind: str, handler: Handler, *, upkeep: bool = False) -> None:
        if kind in self._by_kind:
            raise ValueError(f"job kind {kind!r} already has a handler")
        self._by_kind[kind] = handler
        if upkeep:
            self._upkeep.add(kind)

    def upkeep_kinds(self) -> list[str]:
        """The kinds a manual clock does not stop for (the module's docstring)."""
        return sorted(self._upkeep)

    def get(self, kind: str) -> Handler | None:
        return self._by_kind.get(kind)

    def kinds(self) -> list[str]:
        return sorted(self._by_kind)

    def require(self, kinds: Iterable[str]) -> None:
        """Raises UnhandledJobKind naming those of `kinds` nobody handles."""
        missing = set(kinds) - set(self._by_kind)
        if missing:
            raise UnhandledJobKind(missing)

    def handler(self, kind: str) -> Callable[[TxHandler], TxHandler]:
        """Decorator: `fn(job, conn, context)` handles jobs of `kind` in a write transaction."""

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
