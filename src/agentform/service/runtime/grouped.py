"""Group commit: the runner's many small write transactions of I/O jobs made as one.

Each I/O job's `prepare` and `record` is a short write transaction; with many
jobs in flight (webhook deliveries) the transactions, not the work in them,
were the cost. A `GroupCommit` queues such steps: the first to arrive starts a
commit in a worker thread, and every step queued while that commit runs goes
in the next one, all in one transaction, each step in its own savepoint, so a
step that raises undoes only itself and gets its exception back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agentform.service.store.database import Conn, Database
from agentform.service.store.steps import run_steps

Step = Callable[[Conn], Any]


class GroupCommit:
    def __init__(
        self, db: Database, in_thread: Callable[..., Awaitable[Any]], most: int = 256
    ) -> None:
        self.db = db
        self.in_thread = in_thread  # the runner's: a worker thread, awaited on stop
        self.most = most
        self._queued: list[tuple[Step, asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None

    async def run(self, step: Step) -> Any:
        """`step(conn)` inside a write transaction shared with other steps; its result."""
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((step, done))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.get_running_loop().create_task(self._commit())
        return await done

    async def _commit(self) -> None:
        while self._queued:
            group, self._queued = self._queued[: self.most], self._queued[self.most :]
            try:
                outcomes = await self.in_thread(run_steps, self.db, [s for s, _ in group])
            except BaseException as exc:  # the transaction itself failed (or was cancelled)
                for _, done in group:
                    if not done.done():
                        done.set_exception(exc if isinstance(exc, Exception) else RuntimeError())
                if not isinstance(exc, Exception):
                    raise
                continue  # steps queued meanwhile are awaited too: they get their own try
            for (_, done), (ok, value) in zip(group, outcomes, strict=True):
                if done.done():
                    continue
                if ok:
                    done.set_result(value)
                else:
                    done.set_exception(value)

    async def aclose(self) -> None:
        """Lets a commit under way finish (its thread cannot be stopped anyway)."""
        # Forgotten once closed: the next start may be on another loop, which cannot
        # wait on this one's task (gathering a finished task of a closed loop raises).
        committer, self._committer = self._committer, None
        if committer is not None and not committer.done():
            await asyncio.gather(committer, return_exceptions=True)
