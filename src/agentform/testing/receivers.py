"""In-process receivers: what the test's service delivers webhooks to.

The service is created with `Receivers` as its webhook transport, so a delivery
to any URL lands here and never on the network. Each request is recorded under
the webhook names whose URL it was sent to, with its exact body and headers.
A receiver answers 204 unless a `receiver:` step said otherwise: fail the next N
requests with 500, or answer a given status from then on, or `timeout`: the
attempt ends as one that got no answer in time, at once (the sender records it
as such). Waiting for the service's 10 s deadline on the manual clock would cost
real time per attempt: the clock cannot tell a hung receiver from slow I/O
without waiting a while.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

MAX_RECORDED = 10_000
"""Requests kept per run: a runaway test stops being recorded, not the machine."""


@dataclass
class Received:
    webhook: str
    body: bytes
    headers: dict[str, str]  # lower-case names
    answered: int | None  # None: no answer (timeout)

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def envelope(self) -> dict[str, Any] | None:
        """The notification's envelope, or None for an unwrapped result."""
        data = self.json
        if isinstance(data, dict) and isinstance(data.get("info"), dict) and "event_id" in data:
            return data
        return None


@dataclass
class Behaviour:
    fail: int = 0  # 500s still to answer
    answer: int | str = 204  # a status, or "timeout"


@dataclass
class Receivers(httpx.AsyncBaseTransport):
    """The service's webhook transport, for one test."""

    names_by_url: dict[str, list[str]] = field(default_factory=dict)
    behaviours: dict[str, Behaviour] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)

    def route(self, url: str, webhook: str) -> None:
        # as httpx will send it: `https://host` is requested as `https://host/`
        names = self.names_by_url.setdefault(str(httpx.URL(url)), [])
        if webhook not in names:
            names.append(webhook)

    def behave(self, webhook: str, fail: int | None, answer: int | str | None) -> None:
        self.behaviours[webhook] = (
            Behaviour(fail=fail) if fail is not None else Behaviour(answer=answer or 204)
        )

    def of(self, webhook: str) -> list[Received]:
        return [r for r in self.received if r.webhook == webhook]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        names = self.names_by_url.get(str(request.url), [])
        headers = {k.lower(): v for k, v in request.headers.items()}
        status = self._answer(names)
        for name in names:
            if len(self.received) < MAX_RECORDED:
                self.received.append(Received(name, body, headers, status))
        if status is None:
            raise httpx.ReadTimeout("no answer", request=request)
        return httpx.Response(status)

    def _answer(self, names: list[str]) -> int | None:
        """The status the first named receiver answers with (None: never answers)."""
        if not names:
            return 404  # not a webhook of the workspace: nothing listens there
        behaviour = self.behaviours.setdefault(names[0], Behaviour())
        if behaviour.fail > 0:
            behaviour.fail -= 1
            return 500
        return None if behaviour.answer == "timeout" else int(behaviour.answer)
