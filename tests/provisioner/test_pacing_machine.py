"""A hypothesis state machine over the AIMD window (api/concurrency.py), driven as the
client drives it: requests (new ones and retries) take slots, answers come back
(fine, slow, 429/503, 5xx) or requests are cancelled, waiting or holding a slot, in
any order and together within one turn of the event loop. After every step:

- no request is admitted into a window that is full (in_flight < window then);
- in_flight is exactly the number of requests holding a slot, never negative;
- the window stays within [1, ceiling];
- requests are served in line (retries at the front), cancelled ones skipped;
- nobody waits while a slot is free; a cancelled request leaves no trace.
At the end every request is answered: in_flight returns to 0, nobody waits.
Time is a fake clock; the loop only runs what is ready."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agentform.api.concurrency import AdaptiveConcurrency, Ticket
from tests.clock import InstantClock

pytestmark = pytest.mark.state_machine  # a hypothesis state machine

CEILING = 6


class CheckedWindow(AdaptiveConcurrency):
    """The controller, with every admission checked as it is made."""

    admitted_into_full: int = 0

    def _admit(self) -> None:
        if self.in_flight >= self.window:
            self.admitted_into_full += 1
        super()._admit()


@dataclass
class Request:
    name: int
    retry: bool
    task: asyncio.Task[None] | None = None
    ticket: Ticket | None = None
    answer: asyncio.Future[tuple[str, float]] | None = None
    done: bool = False
    cancelled: bool = False
    released: bool = field(default=False)


class WindowMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = InstantClock()
        self.control = CheckedWindow(CEILING, self.clock, initial=2)
        self.requests: list[Request] = []
        self.line: list[Request] = []  # the model of who waits, front first
        self.served: list[Request] = []  # in the order their slots were granted

    def teardown(self) -> None:
        try:
            while holding := self.holding():  # the waiters get slots as these answer
                for request in holding:
                    assert request.answer is not None
                    request.answer.set_result(("ok", 0.01))
                self.settle()
            assert not self.waiting() and not self.control.waiters
            assert self.control.in_flight == 0
        finally:
            for request in self.requests:
                if request.task is not None and not request.task.done():
                    request.task.cancel()
            self.settle()
            self.loop.close()

    # -- driving -------------------------------------------------------------
    def settle(self) -> None:
        async def turns() -> None:
            for _ in range(10):
                await asyncio.sleep(0)

        self.loop.run_until_complete(turns())

    async def send(self, request: Request) -> None:
        """What ApiClient._send does with the window around one attempt."""
        if self.control.waiters or self.control.in_flight >= self.control.window:
            # no room: the model's line, which the window must serve in this order
            self.line.insert(0, request) if request.retry else self.line.append(request)
        ticket = await self.control.acquire(retry=request.retry)
        request.ticket = ticket
        self.served.append(request)
        request.answer = self.loop.create_future()
        try:
            outcome, latency = await request.answer
        finally:
            request.released = True
            handed_over = self.control.release()
        if outcome == "overloaded":
            self.control.overloaded(ticket)
        elif outcome == "ok":
            self.control.succeeded(ticket, latency, handed_over)
        request.done = True

    def holding(self) -> list[Request]:
        return [r for r in self.requests if r.answer is not None and not r.released]

    def waiting(self) -> list[Request]:
        return [r for r in self.line if not r.cancelled and r not in self.served]

    # -- rules ---------------------------------------------------------------
    @rule(retry=st.booleans(), count=st.integers(1, 4))
    def requests_arrive(self, retry: bool, count: int) -> None:
        for _ in range(count):
            request = Request(len(self.requests), retry)
            self.requests.append(request)
            request.task = self.loop.create_task(self.send(request))
        self.settle()

    @precondition(lambda self: self.holding())
    @rule(
        data=st.data(),
        outcome=st.sampled_from(["ok", "overloaded", "error"]),
        latency=st.sampled_from([0.010, 0.012, 0.05]),
        together=st.integers(1, 3),
    )
    def answers_arrive(
        self, data: st.DataObject, outcome: str, latency: float, together: int
    ) -> None:
        """One or more answers in the same turn of the loop."""
        holding = self.holding()
        chosen = data.draw(
            st.lists(st.sampled_from(holding), min_size=1, max_size=together, unique_by=id)
        )
        for request in chosen:
            assert request.answer is not None
            if not request.answer.done():
                request.answer.set_result((outcome, latency))
        self.settle()

    @precondition(lambda self: self.waiting() or self.holding())
    @rule(
        data=st.data(),
        order=st.sampled_from(["cancel, answer", "answer, cancel", "answer, cancel soon"]),
    )
    def a_request_is_cancelled(self, data: st.DataObject, order: str) -> None:
        """Cancelled waiting or holding a slot, in the same turn of the loop as an answer
        that frees a slot: before it, after it (the freed slot's release passes over
        the cancelled waiter), or just after the release handed the waiter a slot
        it no longer wants ("cancel soon")."""
        request = data.draw(st.sampled_from(self.waiting() + self.holding()))
        assert request.task is not None
        others = [r for r in self.holding() if r is not request]
        if order == "cancel, answer" or not others:
            request.task.cancel()
        for other in others[:1]:
            assert other.answer is not None
            other.answer.set_result(("ok", 0.01))
        if order == "answer, cancel" and others:
            request.task.cancel()
        elif order == "answer, cancel soon" and others:
            self.loop.call_soon(request.task.cancel)
        request.cancelled = True
        self.settle()

    # -- invariants ------------------------------------------------------------
    @invariant()
    def admitted_only_into_room(self) -> None:
        assert self.control.admitted_into_full == 0

    @invariant()
    def in_flight_counts_the_slots_held(self) -> None:
        held = [r for r in self.served if not r.released]
        assert self.control.in_flight == len(held) >= 0

    @invariant()
    def window_within_bounds(self) -> None:
        assert 1 <= self.control.window <= CEILING and 1.0 <= self.control.limit <= CEILING

    @invariant()
    def served_in_line(self) -> None:
        """Who got a slot left the line from its front (cancelled ones skipped)."""
        for request in list(self.line):
            if request in self.served:
                ahead = self.line[: self.line.index(request)]
                assert all(r.cancelled for r in ahead), (request.name, [r.name for r in ahead])
                self.line = self.line[self.line.index(request) + 1 :]
        self.line = [r for r in self.line if not (r.cancelled and r.task and r.task.done())]

    @invariant()
    def nobody_waits_beside_a_free_slot(self) -> None:
        if self.waiting():
            assert self.control.in_flight >= self.control.window
        live = [w for w in self.control.waiters if not w.done()]
        assert len(live) == len(self.waiting())


@pytest.mark.slow
def test_the_window_machine() -> None:
    run_state_machine_as_test(
        WindowMachine, settings=settings(max_examples=150, stateful_step_count=30, deadline=None)
    )
