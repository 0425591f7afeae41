"""Optional rate limit: a token bucket per API key; over the rate, 429 + Retry-After."""

from __future__ import annotations

import math
import threading

from starlette.types import ASGIApp, Receive, Scope, Send

from agentform.service.clock import Clock
from agentform.service.errors import error_response
from agentform.service.http.auth import hash_key


class TokenBucket:
    def __init__(self, rate: float, clock: Clock, burst: float | None = None) -> None:
        self.rate = rate
        self.clock = clock
        self.capacity = burst if burst is not None else max(1.0, rate)
        self._tokens: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, who: str) -> float:
        """0 when allowed, else the seconds until a token is there."""
        now = self.clock.seconds()
        with self._lock:
            tokens, last = self._tokens.get(who, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1:
                self._tokens[who] = (tokens - 1, now)
                return 0.0
            self._tokens[who] = (tokens, now)
            return (1 - tokens) / self.rate


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, rate: float, clock: Clock) -> None:
        self.app = app
        self.bucket = TokenBucket(rate, clock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            key = headers.get(b"x-api-key") or headers.get(b"x-service-agents-api-key") or b""
            wait = self.bucket.take(hash_key(key.decode("latin-1")))
            if wait > 0:
                retry = str(max(1, math.ceil(wait)))
                response = error_response(
                    429, "rate limit exceeded", headers={"Retry-After": retry}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
