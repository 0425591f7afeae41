"""The service in-process for an httpx client (`endpoint: local`), runtime included.

`httpx.ASGITransport` calls the app but never runs its lifespan, so nothing
would run the time-driven work. This transport starts the app's runner on the
first request, on the client's own event loop, and at `aclose` stops it and
closes the database: pending work stays in the file and resumes next time.
An app made with `runtime=False` never starts its runner: requests only.
"""

from __future__ import annotations

import httpx
from fastapi import FastAPI


class InProcessTransport(httpx.ASGITransport):
    def __init__(self, app: FastAPI) -> None:
        super().__init__(app=app)
        self.service = app

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.service.state.runtime:
            await self.service.state.runner.start()  # once; later calls do nothing
        return await super().handle_async_request(request)

    async def aclose(self) -> None:
        await self.service.state.runner.stop()
        self.service.state.db.close()
        await super().aclose()
