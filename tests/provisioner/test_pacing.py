"""Pacing of a run, on fake clocks (no real sleep): the shared token bucket and its
pause, the AIMD concurrency controller, and the client using both."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentform.api.client import ApiClient
from agentform.api.concurrency import AdaptiveConcurrency, Ticket
from agentform.api.ratelimit import RateLimiter, parse_rate
from agentform.api.retries import RetryPolicy
from agentform.core.errors import AgentformError, ApiError
from tests.clock import InstantClock, ManualClock
from tests.tiers import examples

# -- the token bucket ----------------------------------------------------------


def test_a_known_rate_spaces_requests_in_order() -> None:
    clock = InstantClock()
    bucket = RateLimiter(clock, rate=5)
    assert [bucket.reserve() for _ in range(4)] == pytest.approx([0, 0.2, 0.4, 0.6])
    clock.time += 10  # idle for long: at most `burst` (1) saved up
    assert [bucket.reserve() for _ in range(3)] == pytest.approx([0, 0.2, 0.4])


def test_no_rate_means_no_wait_but_a_pause_still_holds_everyone() -> None:
    clock = InstantClock()
    bucket = RateLimiter(clock)
    assert [bucket.reserve() for _ in range(100)] == [0] * 100
    bucket.pause(2.0)
    bucket.pause(1.0)  # a shorter pause inside a longer one changes nothing
    assert bucket.reserve() == pytest.approx(2.0)
    clock.time += 0.5
    assert bucket.reserve() == pytest.approx(1.5)
    assert bucket.pauses == 1


def test_after_a_pause_there_is_no_saved_up_burst() -> None:
    clock = InstantClock()
    bucket = RateLimiter(clock, rate=10, burst=5)
    bucket.pause(3.0)
    waits = [bucket.reserve() for _ in range(3)]
    assert waits == pytest.approx([3.1, 3.2, 3.3])


def test_a_pause_that_begins_while_waiting_holds_the_waiter() -> None:
    async def go() -> list[float]:
        clock = ManualClock()
        bucket = RateLimiter(clock, rate=2)
        sent: list[float] = []

        async def send() -> None:
            await bucket.acquire()
            sent.append(clock.now() - 1000)

        tasks = [asyncio.create_task(send()) for _ in range(3)]  # slots at 0, 0.5, 1.0
        await clock.advance(0.1)
        bucket.pause(2.0)  # the service said Retry-After: 2 at t=0.1
        await clock.advance(5)
        await asyncio.gather(*tasks)
        return sent

    sent = asyncio.run(go())
    assert sent[0] == 0
    # held past the end of the pause, and still spaced at the rate: a burst of all
    # that waited would meet the service's empty bucket at once
    assert sent[1:] == pytest.approx([2.6, 3.1])


def test_a_pause_keeps_the_rate_for_many_waiting_and_their_order() -> None:
    async def go() -> list[tuple[int, float]]:
        clock = ManualClock()
        bucket = RateLimiter(clock, rate=4)
        sent: list[tuple[int, float]] = []

        async def send(n: int) -> None:
            await bucket.acquire()
            sent.append((n, clock.now() - 1000))

        tasks = [asyncio.create_task(send(n)) for n in range(8)]  # 0, 0.25 ... 1.75
        await clock.advance(0.6)  # three sent
        bucket.pause(1.0)
        await clock.advance(0.5)
        bucket.pause(0.2)  # inside the first: changes nothing
        later = asyncio.create_task(send(8))  # joins the line after the pause
        await clock.advance(5)
        await asyncio.gather(*tasks, later)
        return sent

    sent = asyncio.run(go())
    assert [n for n, _ in sent] == list(range(9))
    times = [t for _, t in sent]
    assert times[:3] == pytest.approx([0, 0.25, 0.5])
    assert times[3:] == pytest.approx([1.6 + 0.25 * k for k in range(1, 7)])


@pytest.mark.parametrize(
    ("text", "rate"), [("20", 20), ("20/s", 20), ("2.5/s", 2.5), ("600/min", 10), (" 3 / s ", 3)]
)
def test_rates_are_parsed(text: str, rate: float) -> None:
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["0", "-1", "fast", "3/h", ""])
def test_bad_rates_are_refused(text: str) -> None:
    with pytest.raises(AgentformError, match="rate limit"):
        parse_rate(text)


# -- the AIMD controller --------------------------------------------------------


def full(control: AdaptiveConcurrency) -> Ticket:
    return Ticket(control.epoch, window_full=True)


def test_slow_start_then_steady_at_the_ceiling() -> None:
    assert AdaptiveConcurrency(ceiling=16, clock=InstantClock()).window == 10  # IW10
    assert AdaptiveConcurrency(ceiling=4, clock=InstantClock()).window == 4  # --parallelism 4
    control = AdaptiveConcurrency(ceiling=16, clock=InstantClock(), initial=4)
    assert control.window == 4
    for _ in range(4):
        control.succeeded(full(control), 0.020)
    assert control.window == 8  # one per answer: doubling each round trip
    for _ in range(50):
        control.succeeded(full(control), 0.021)
    assert control.window == 16 and control.peak_limit == 16  # never above --parallelism


def test_growth_needs_a_full_window_and_latency_that_holds() -> None:
    control = AdaptiveConcurrency(ceiling=16, clock=InstantClock(), initial=4)
    control.succeeded(full(control), 0.010)
    assert control.window == 5
    control.succeeded(Ticket(control.epoch, window_full=False), 0.010)
    assert control.window == 5  # an idle window says nothing about a larger one
    control.succeeded(full(control), 0.025)  # 2.5 times the fastest: the service queues
    assert control.window == 5
    control.succeeded(full(control), 0.019)
    assert control.window == 6


def test_back_off_halves_once_per_window_down_to_one() -> None:
    control = AdaptiveConcurrency(ceiling=16, clock=InstantClock(), initial=16)
    sent_before = [full(control) for _ in range(10)]  # ten requests of the same window
    for ticket in sent_before:
        control.overloaded(ticket)  # ten 429s answer them: one signal
    assert control.window == 8
    control.overloaded(full(control))  # a request sent after the back-off: a new signal
    assert control.window == 4
    for _ in range(5):
        control.overloaded(full(control))
    assert control.window == 1 and control.limit == 1.0


def test_after_a_back_off_growth_is_one_per_window() -> None:
    control = AdaptiveConcurrency(ceiling=16, clock=InstantClock(), initial=16)
    control.overloaded(full(control))
    assert control.window == 8
    for _ in range(8):
        control.succeeded(full(control), 0.02)
    assert control.window == 8  # 8 x 1/8 ... just short of 9
    control.succeeded(full(control), 0.02)
    assert control.window == 9


def test_a_cancelled_waiter_leaves_the_limiter_consistent() -> None:
    """A waiter cancelled, then passed over by a release before its task resumes,
    is not removed twice: the cancellation propagates and the slots add up."""

    async def go() -> None:
        control = AdaptiveConcurrency(ceiling=1, clock=InstantClock(), initial=1)
        await control.acquire()
        waiting = asyncio.create_task(control.acquire())
        await asyncio.sleep(0)
        assert len(control.waiters) == 1
        waiting.cancel()
        control.release()  # before the cancelled task runs: its waiter is skipped
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert control.in_flight == 0 and not control.waiters
        await asyncio.wait_for(control.acquire(), 1)  # the free slot is still there
        assert control.in_flight == 1

    asyncio.run(go())


def test_slots_follow_the_window_and_retries_go_first() -> None:
    async def go() -> None:
        control = AdaptiveConcurrency(ceiling=4, clock=InstantClock(), initial=2)
        await control.acquire()
        await control.acquire()
        order: list[str] = []

        async def take(name: str, retry: bool = False) -> None:
            await control.acquire(retry=retry)
            order.append(name)

        waiting = [asyncio.create_task(take("new-1")), asyncio.create_task(take("new-2"))]
        await asyncio.sleep(0)
        waiting.append(asyncio.create_task(take("retry", retry=True)))
        await asyncio.sleep(0)
        assert order == [] and control.in_flight == 2
        control.release()
        await asyncio.sleep(0)
        assert order == ["retry"]
        control.succeeded(full(control), 0.01)  # the window grows to 3: one more goes
        await asyncio.sleep(0)
        assert order == ["retry", "new-1"] and control.in_flight == 3
        cancelled = waiting[1]
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        for _ in range(3):
            control.release()
        assert control.in_flight == 0 and not control.waiters  # nothing leaked

    asyncio.run(go())


# -- the client ----------------------------------------------------------------


class Clocked(httpx.AsyncBaseTransport):
    """Answers from `reply(request, n)`, recording when (on the clock) each was sent."""

    def __init__(self, clock: ManualClock, reply: Any, latency: float = 0.0) -> None:
        self.clock = clock
        self.reply = reply
        self.latency = latency
        self.sent: list[tuple[float, str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((self.clock.now() - 1000, request.method, request.url.path))
        n = len(self.sent)
        if self.latency:
            await self.clock.sleep(self.latency)
        status, body, headers = self.reply(request, n)
        content = json.dumps(body).encode() if body is not None else b""
        return httpx.Response(status, content=content, headers=headers)


@pytest.mark.parametrize(
    ("status", "others"),
    [(429, "POST"), (503, "GET")],  # a create is not sent again after a 503 (it may have run)
)
def test_retry_after_pauses_the_whole_run_not_one_request(status: int, others: str) -> None:
    async def go() -> tuple[ApiClient, list[tuple[float, str, str]]]:
        clock = ManualClock()

        def reply(request: httpx.Request, n: int) -> tuple[int, Any, dict[str, str]]:
            if n == 1:
                return status, {"code": status, "message": "slow down"}, {"Retry-After": "2"}
            return 200, {"ok": True}, {}

        transport = Clocked(clock, reply)
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock)
        first = asyncio.create_task(api.request("GET", "/a"))
        await clock.advance(0.5)
        rest = [asyncio.create_task(api.request(others, f"/b{i}", json={})) for i in range(3)]
        await clock.advance(1.0)
        assert len(transport.sent) == 1  # t=1.5: nothing else went out
        await clock.advance(1.0)
        await asyncio.gather(first, *rest)
        return api, transport.sent

    api, sent = asyncio.run(go())
    assert sent[0] == (0.0, "GET", "/agents/v2/a")
    assert len(sent) == 5 and all(t == pytest.approx(2.0) for t, _, _ in sent[1:])
    assert sorted((m, p) for _, m, p in sent[1:]) == [("GET", "/agents/v2/a")] + [
        (others, f"/agents/v2/b{i}") for i in range(3)
    ]
    assert api.limiter.pauses == 1
    assert api.concurrency.epoch == 1  # the window backed off, once


def test_429s_slow_a_run_down_and_back_off_its_concurrency() -> None:
    async def go() -> tuple[ApiClient, Clocked]:
        clock = ManualClock()

        def reply(request: httpx.Request, n: int) -> tuple[int, Any, dict[str, str]]:
            if n in (3, 4):  # two of the first window, sent together
                return 429, {"code": 429, "message": "slow down"}, {"Retry-After": "1"}
            return 201, {"id": str(n)}, {}

        transport = Clocked(clock, reply, latency=0.010)
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock)
        assert api.concurrency.window == 10  # INITIAL_WINDOW, as TCP's IW10
        creates = [
            asyncio.create_task(api.request("POST", "/p", json={"name": str(i)})) for i in range(30)
        ]
        await clock.advance(10)
        results = await asyncio.gather(*creates)
        assert len(results) == 30
        return api, transport

    api, transport = asyncio.run(go())
    sent = [t for t, _, _ in transport.sent]
    assert len(sent) == 32  # 30 creates, the 2 refused sent again, none twice
    assert sent[:10] == [0.0] * 10
    # at t=0.01 the two answers worked on first free their slots and, requests
    # waiting, grow the window by one each (slow start, 10 -> 12): four sent; then
    # the two 429s: one back-off and one pause for both, nothing more until t=1.01
    assert sent[10:14] == pytest.approx([0.01] * 4)
    assert all(t >= 1.01 - 1e-9 for t in sent[14:])
    # then the halved window (12 -> 6): six a round trip where slow start sent 16
    per_round = [sum(1 for t in sent if t == pytest.approx(1.01 + r * 0.01)) for r in range(2)]
    assert per_round == [6, 6]
    assert api.limiter.pauses == 1
    assert api.concurrency.epoch == 1  # one back-off for one window's 429s
    assert api.concurrency.peak_in_flight == 12


def test_slow_start_doubles_each_round_trip_while_requests_wait_for_a_slot() -> None:
    """Requests queued behind the window are the evidence that it is too small, even
    when a whole window went out at once (only the last of a burst is admitted into
    a full window): 10, then 16 (the ceiling, not 20) in flight, not 10, 11, 12."""

    async def go() -> list[float]:
        clock = ManualClock()
        transport = Clocked(clock, lambda request, n: (200, {"n": n}, {}), latency=0.010)
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock)
        reads = [asyncio.create_task(api.request("GET", f"/r{i}")) for i in range(60)]
        await clock.advance(1)
        await asyncio.gather(*reads)
        return [t for t, _, _ in transport.sent]

    sent = asyncio.run(go())
    per_round = [sum(1 for t in sent if t == pytest.approx(r * 0.010)) for r in range(4)]
    assert per_round == [10, 16, 16, 16]


def test_a_request_refused_too_many_times_in_a_row_fails() -> None:
    clock = InstantClock()

    def reply(request: httpx.Request, n: int) -> tuple[int, Any, dict[str, str]]:
        return 429, {"code": 429, "message": "slow down"}, {"Retry-After": "1"}

    transport = Clocked(clock, reply)  # type: ignore[arg-type]
    api = ApiClient(
        "http://svc/agents/v2",
        "k",
        transport=transport,
        clock=clock,
        retry=RetryPolicy(throttled_attempts=6),
    )
    with pytest.raises(ApiError, match="429 slow down"):
        asyncio.run(api.request("POST", "/p", json={"name": "a"}))
    assert len(transport.sent) == 6 and clock.sleeps == [1.0] * 5


def test_a_freed_slot_goes_out_before_the_answer_is_worked_on() -> None:
    """Answers that arrive together: each slot's next request is sent before any of
    those answers goes back to its caller; else the next requests would all go out
    after the client's work on the whole batch, and come back together again."""

    async def go() -> list[str]:
        events: list[str] = []
        gate = asyncio.Event()

        class Gated(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                name = request.url.path.rsplit("/", 1)[1]
                events.append(f"sent {name}")
                if name in ("a", "b"):
                    await gate.wait()  # the first two answers arrive together
                return httpx.Response(200, json={"name": name})

        api = ApiClient("http://svc/agents/v2", "k", transport=Gated(), concurrency=2)

        async def call(name: str) -> None:
            await api.request("GET", f"/{name}")
            events.append(f"answered {name}")

        calls = [asyncio.create_task(call(n)) for n in "abcd"]
        while len(events) < 2:
            await asyncio.sleep(0)
        assert events == ["sent a", "sent b"] and api.concurrency.in_flight == 2
        gate.set()
        await asyncio.gather(*calls)
        return events

    events = asyncio.run(go())
    assert events.index("sent c") < events.index("answered a")
    assert events.index("sent d") < events.index("answered a")
    assert sorted(events) == sorted(
        [f"sent {n}" for n in "abcd"] + [f"answered {n}" for n in "abcd"]
    )


def test_a_known_rate_paces_every_request_of_a_run_reads_and_writes_alike() -> None:
    async def go() -> list[tuple[float, str, str]]:
        clock = ManualClock()
        transport = Clocked(clock, lambda request, n: (200, {"n": n}, {}))
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock, rate_limit=4)
        calls = [api.request("GET", f"/r{i}") for i in range(3)]
        calls += [api.request("POST", f"/w{i}", json={}) for i in range(3)]
        running = asyncio.gather(*calls)
        await clock.advance(2)
        await running
        return transport.sent

    sent = asyncio.run(go())
    assert [t for t, _, _ in sent] == pytest.approx([0, 0.25, 0.5, 0.75, 1.0, 1.25])
    assert sorted(m for _, m, _ in sent) == ["GET"] * 3 + ["POST"] * 3


def test_a_retry_after_pauses_the_run_even_when_its_request_is_not_sent_again() -> None:
    """A create refused with 503 and Retry-After fails (it may have run: not sent
    again blindly), but the service said when it can take more: the run waits."""

    async def go() -> tuple[ApiClient, list[tuple[float, str, str]], BaseException | None]:
        clock = ManualClock()

        def reply(request: httpx.Request, n: int) -> tuple[int, Any, dict[str, str]]:
            if n == 1:
                return 503, {"code": 503, "message": "busy"}, {"Retry-After": "2"}
            return 200, {"ok": True}, {}

        transport = Clocked(clock, reply)
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock)
        create = asyncio.create_task(api.request("POST", "/p", json={"name": "a"}))
        await clock.advance(0.5)
        reads = [asyncio.create_task(api.request("GET", f"/r{i}")) for i in range(2)]
        await clock.advance(1.0)
        assert len(transport.sent) == 1  # t=1.5: nothing else went out
        await clock.advance(1.0)
        await asyncio.gather(*reads)
        failed = (await asyncio.gather(create, return_exceptions=True))[0]
        return api, transport.sent, failed

    api, sent, failed = asyncio.run(go())
    assert isinstance(failed, ApiError) and "503 busy" in str(failed)
    assert [(m, p) for _, m, p in sent] == [("POST", "/agents/v2/p")] + [
        ("GET", f"/agents/v2/r{i}") for i in range(2)
    ]  # the create once
    assert all(t == pytest.approx(2.0) for t, _, _ in sent[1:])
    assert api.limiter.pauses == 1


@settings(max_examples=examples(150), deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["arrive", "pause", "advance"]),
            st.floats(0.0, 2.0, allow_nan=False).map(lambda x: round(x, 2)),
        ),
        max_size=25,
    ),
    rate=st.sampled_from([1.0, 4.0, 10.0]),
)
def test_the_bucket_keeps_its_rate_its_order_and_its_pauses(
    steps: list[tuple[str, float]], rate: float
) -> None:
    """Requests arrive, the service asks for pauses, time passes, in any order: the
    requests go out in the order they came, at least 1/rate apart, and none after a
    pause was asked for before its end."""

    async def go() -> tuple[list[tuple[str, float, float]], int]:
        clock = ManualClock()
        bucket = RateLimiter(clock, rate=rate)
        events: list[tuple[str, float, float]] = []  # ("sent", n, t) or ("pause", end, t)
        tasks: list[asyncio.Task[None]] = []

        async def send(n: int) -> None:
            await bucket.acquire()
            events.append(("sent", n, clock.now()))

        for step, value in steps:
            if step == "arrive":
                tasks.append(asyncio.create_task(send(len(tasks))))
                await clock.settle()
            elif step == "pause" and value > 0:
                events.append(("pause", clock.now() + value, clock.now()))
                bucket.pause(value)
            else:
                await clock.advance(value)
        await clock.advance(len(tasks) / rate + 10)
        await asyncio.gather(*tasks)
        return events, len(tasks)

    events, count = asyncio.run(go())
    sent = [(n, t) for what, n, t in events if what == "sent"]
    assert [n for n, _ in sent] == list(range(count))
    times = [t for _, t in sent]
    assert all(b - a >= 1 / rate - 1e-9 for a, b in itertools.pairwise(times))
    paused_until = float("-inf")
    for what, value, t in events:
        if what == "pause":
            paused_until = max(paused_until, value)
        else:
            assert t >= paused_until - 1e-9, events


def test_requests_cancelled_while_paced_leave_no_slot_and_no_place_in_line() -> None:
    """Ctrl-C while requests wait for their turn at the rate (holding window slots)
    and for a slot: all stop, every slot is given back, the line is empty."""

    async def go() -> ApiClient:
        clock = ManualClock()
        transport = Clocked(clock, lambda request, n: (200, {"n": n}, {}), latency=0.01)
        api = ApiClient("http://svc/agents/v2", "k", transport=transport, clock=clock, rate_limit=2)
        calls = [asyncio.create_task(api.request("GET", f"/r{i}")) for i in range(20)]
        await clock.advance(0.7)  # two sent; some wait for the rate, the rest for a slot
        assert api.limiter.waiting and api.concurrency.waiters
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        return api

    api = asyncio.run(go())
    assert api.concurrency.in_flight == 0 and not api.concurrency.waiters
    assert not api.limiter.waiting
